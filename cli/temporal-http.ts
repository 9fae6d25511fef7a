/**
 * The TemporalReader over Temporal's HTTP API (the grpc-gateway built into the frontend; the dev
 * server serves it on `--http-port`), with Node's http module: the read-only commands answer without
 * loading the gRPC client, its protobuf definitions or grpc-js (issue 10). Not with fetch: its first
 * call loads undici, about 60 ms here, more than all the calls of a `status` together.
 * The JSON is decoded in temporal-http-decode.ts.
 */
import http from 'node:http';
import https from 'node:https';
import type { QueryName } from '../core/workflow-names';
import type { PayloadKey } from '../worker/payload-keys';
import {
  decodeDescribe,
  decodeHistoryStart,
  decodeLastWorkflowTaskFailure,
  decodePollerAccessTimes,
  decodeQueryResult,
  decodeWorkflowList,
  errorFromResponse,
  TemporalHttpError,
} from './temporal-http-decode';
import type {
  HistoryStart,
  ListedWorkflow,
  PollerKind,
  TemporalReader,
  WorkflowSummary,
} from './temporal-reader';

/** How long one HTTP call may take; a query gives up sooner (goal-status.ts QUERY_TIMEOUT_MS). */
const REQUEST_TIMEOUT_MS = 10_000;

/** Workflows asked for per page of a list. */
const LIST_PAGE_SIZE = 100;

// Full payloads, not the lossy shorthand (see temporal-http-decode.ts).
const FULL_PAYLOADS = 'noPayloadShorthand';

const TASK_QUEUE_TYPE: Record<PollerKind, string> = {
  workflow: 'TASK_QUEUE_TYPE_WORKFLOW',
  activity: 'TASK_QUEUE_TYPE_ACTIVITY',
};

/** Where the HTTP API is and which namespace to read. */
export interface HttpReaderOptions {
  /** `http://host:port`, without a trailing slash. */
  baseUrl: string;
  namespace: string;
  requestTimeoutMs?: number;
  /** Keys to decrypt encrypted payloads with (docs/security.md); none: such payloads are errors. */
  payloadKeys?: readonly PayloadKey[];
}

// One connection for all the calls of a command; idle sockets do not keep the process alive.
const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/** An HTTP answer: its status and its body as text. */
interface HttpAnswer {
  status: number;
  text: string;
}

/** One request; rejects on a network failure or when no answer came within `timeoutMs`. */
function request(
  method: 'GET' | 'POST',
  url: string,
  body: string | undefined,
  timeoutMs: number,
): Promise<HttpAnswer> {
  const secure = url.startsWith('https:');
  const send = secure ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const outgoing = send(
      url,
      {
        method,
        agent: secure ? agents.https : agents.http,
        headers:
          body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    outgoing.setTimeout(timeoutMs, () =>
      outgoing.destroy(
        new TemporalHttpError(`Temporal's HTTP API did not answer ${method} ${url} within ${timeoutMs} ms`),
      ),
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** True when a Temporal HTTP API answers GetSystemInfo at `baseUrl` within `timeoutMs`. */
export async function isHttpApiReachable(baseUrl: string, timeoutMs: number): Promise<boolean> {
  try {
    const answer = await request('GET', `${baseUrl}/api/v1/system-info`, undefined, timeoutMs);
    const body = JSON.parse(answer.text) as { serverVersion?: unknown } | null;
    return answer.status === 200 && typeof body?.serverVersion === 'string';
  } catch {
    return false;
  }
}

/** Events read from the end of a history to find a failed workflow task. */
const REVERSE_HISTORY_PAGE = 20;

/** Reads goals through the HTTP API. */
export class HttpTemporalReader implements TemporalReader {
  readonly transport = 'http' as const;
  private readonly namespacePath: string;

  constructor(private readonly options: HttpReaderOptions) {
    this.namespacePath = `/api/v1/namespaces/${encodeURIComponent(options.namespace)}`;
  }

  private get keys(): readonly PayloadKey[] {
    return this.options.payloadKeys ?? [];
  }

  async describe(workflowId: string): Promise<WorkflowSummary | null> {
    try {
      return decodeDescribe(
        await this.call('GET', `/workflows/${encodeURIComponent(workflowId)}`),
        this.keys,
      );
    } catch (err) {
      if (err instanceof TemporalHttpError && err.notFound) return null;
      throw err;
    }
  }

  async query<Result>(workflowId: string, query: QueryName<Result>): Promise<Result> {
    const path = `/workflows/${encodeURIComponent(workflowId)}/query/${encodeURIComponent(query.name)}`;
    return decodeQueryResult(await this.call('POST', path, {}, { query: {} }), this.keys) as Result;
  }

  async historyStart(workflowId: string, pageSize: number): Promise<HistoryStart> {
    const path = `/workflows/${encodeURIComponent(workflowId)}/history`;
    return decodeHistoryStart(await this.call('GET', path, { maximumPageSize: String(pageSize) }), this.keys);
  }

  async lastWorkflowTaskFailure(workflowId: string): Promise<string | null> {
    const path = `/workflows/${encodeURIComponent(workflowId)}/history-reverse`;
    const page = await this.call('GET', path, { maximumPageSize: String(REVERSE_HISTORY_PAGE) });
    return decodeLastWorkflowTaskFailure(page, this.keys);
  }

  async listWorkflows(query: string, limit: number): Promise<ListedWorkflow[]> {
    const listed: ListedWorkflow[] = [];
    let nextPageToken: string | null = null;
    do {
      const params: Record<string, string> = { query, pageSize: String(Math.min(limit, LIST_PAGE_SIZE)) };
      if (nextPageToken) params.nextPageToken = nextPageToken;
      const page = decodeWorkflowList(await this.call('GET', '/workflows', params));
      listed.push(...page.workflows);
      nextPageToken = page.nextPageToken;
    } while (nextPageToken && listed.length < limit);
    return listed.slice(0, limit);
  }

  async pollerAccessTimes(taskQueue: string, kind: PollerKind): Promise<number[]> {
    const path = `/task-queues/${encodeURIComponent(taskQueue)}`;
    const params = { taskQueueType: TASK_QUEUE_TYPE[kind], 'taskQueue.kind': 'TASK_QUEUE_KIND_NORMAL' };
    return decodePollerAccessTimes(await this.call('GET', path, params));
  }

  /** One call: the parsed JSON of a 2xx answer, else the server's error as a TemporalHttpError. */
  private async call(
    method: 'GET' | 'POST',
    path: string,
    params: Record<string, string> = {},
    body?: unknown,
  ): Promise<unknown> {
    const search = new URLSearchParams(params);
    search.set(FULL_PAYLOADS, '');
    const url = `${this.options.baseUrl}${this.namespacePath}${path}?${search}`;
    const timeoutMs = this.options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    const { status, text } = await request(
      method,
      url,
      body === undefined ? undefined : JSON.stringify(body),
      timeoutMs,
    );
    if (status < 200 || status >= 300) throw errorFromResponse(status, text);
    try {
      return JSON.parse(text);
    } catch {
      throw new TemporalHttpError(`Temporal's HTTP API answered ${method} ${path} with no JSON`);
    }
  }
}
