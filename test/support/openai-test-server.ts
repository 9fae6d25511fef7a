/**
 * A local OpenAI-compatible HTTP server for tests: real HTTP, real SSE, no mocks.
 *
 * ```ts
 * const server = await startOpenAITestServer();
 * server.enqueue(
 *   { text: 'Let me look.', toolCalls: [{ name: 'read_file', args: { path: 'a.txt' } }] },
 *   { status: 429, headers: { 'Retry-After': '2' } },
 *   { text: 'Done.' },
 * );
 * const client = createModelClient('openai-compatible:test-model', { baseUrl: server.url, env: {} });
 * // ...
 * expect(server.requests[0].body.messages).toHaveLength(2);
 * await server.close();
 * ```
 *
 * Every POST to `<url>/chat/completions` takes the next queued response (first in, first out). When
 * the queue is empty, the `fallback` (if any) makes one from the request body, so a long workflow
 * test can script by step (see requestStep); with neither, the server answers 400 with a message
 * saying so, which a model client reports as a non-retryable bad request, so a test fails fast.
 *
 * With `windowTokens`, a prompt over the window is answered as OpenAI does (HTTP 400, code
 * `context_length_exceeded`) and recorded in `overflows`; `overflow` forces that answer for chosen
 * requests, e.g. one in the middle of a long run.
 *
 * With `promptCache`, the server reports cache usage as a provider with a prefix cache does
 * (Anthropic's way, in OpenAI's fields): the request is read as blocks (the tool schemas, then each
 * message), and the tokens of the longest run of leading blocks that an earlier request also began
 * with count as cache reads (`prompt_tokens_details.cached_tokens`), the rest as cache writes
 * (`cache_write_tokens`). A prefix under `minTokens` is not cached, as a provider's minimum.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One tool call of a scripted turn. */
export interface TestToolCall {
  name: string;
  /** The arguments, sent JSON-encoded. Defaults to `{}`. */
  args?: Record<string, unknown>;
  /** Sent verbatim instead of `args`: for malformed-argument tests. */
  argsRaw?: string;
  /** Defaults to `call_<request number>_<index>`. */
  id?: string;
}

/** A successful model turn, streamed as `chat.completion.chunk` events (or one completion if not streaming). */
export interface TestTurn {
  text?: string;
  toolCalls?: TestToolCall[];
  /** Reported in the usage chunk; defaults to characters / 4 of the request messages and of the answer. */
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
  /** Pause this long between the pieces of the text, as a model that writes slowly (partial messages). */
  pieceDelayMs?: number;
  /** Pause this long after the first chunk, so the client is mid-stream (slow model, abort tests). */
  delayMs?: number;
  /** Ends the stream after the text with an OpenAI-style `{"error": ...}` event instead of a finish. */
  streamError?: { message: string; type?: string; code?: string };
  /**
   * Sends the first chunk, then nothing more while the connection stays open: a provider stalled
   * mid-answer. The server lets go when the client gives up (or on close()).
   */
  stallAfterFirstChunk?: boolean;
  /** Sends the text (some output), then nothing more while the connection stays open: stalled after output. */
  stallAfterText?: boolean;
  /** During `delayMs` (or `holdUntil`), sends an SSE comment (`: ping`) this often, as providers keep idle streams alive. */
  keepAliveMs?: number;
  /**
   * After the first chunk, keeps the stream alive with pings until this settles, then goes on (to a
   * stall, say): holds a call at a point the test wants to see, however slow the machine.
   */
  holdUntil?: Promise<void>;
  /** Destroys the connection after the first chunk, like a dropped network link. */
  disconnectMidStream?: boolean;
  /** Overrides the finish reason (`tool_calls` when there are tool calls, `stop` otherwise). */
  finishReason?: string;
}

/** An HTTP error answer. A `body` object is sent as JSON, a string as is; the default is an OpenAI-style error. */
export interface TestErrorResponse {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/** What the server answers to one request. */
export type TestResponse = TestTurn | TestErrorResponse;

/** The parts of a Chat Completions request body that tests usually look at; the rest is kept too. */
export interface ChatRequestBody {
  model?: string;
  messages?: Array<{
    role: string;
    content?: unknown;
    tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
  }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

/** One request the server received. */
export interface RecordedRequest {
  /** `Date.now()` when the request arrived. */
  time: number;
  method: string;
  /** The path, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (`{}` if there was none or it did not parse). */
  body: ChatRequestBody;
  /** The body as sent, byte for byte (UTF-8). */
  raw: string;
}

/** Makes a response for a request that found the queue empty. */
export type TestFallback = (
  body: ChatRequestBody,
  request: RecordedRequest,
) => TestResponse | Promise<TestResponse>;

/** Options of startOpenAITestServer. */
export interface OpenAITestServerOptions {
  fallback?: TestFallback;
  /**
   * The model's context window, enforced as OpenAI does: a request whose prompt (messages and tool
   * schemas, counted as characters / 4) is over it gets HTTP 400 `context_length_exceeded`, before
   * any queued response or the fallback is used.
   */
  windowTokens?: number;
  /** Answers this request with `context_length_exceeded` whatever its size (to force one overflow). */
  overflow?: (body: ChatRequestBody, requestNumber: number) => boolean;
  /** Simulates a prefix cache and reports its reads and writes in every answer's usage. */
  promptCache?: { minTokens?: number };
}

/** What the simulated prompt cache counted for one request. */
export interface CacheUsage {
  promptTokens: number;
  cachedTokens: number;
  writtenTokens: number;
}

/** A running test server. */
export interface OpenAITestServer {
  /** Base URL ending in `/v1`, for `--base-url`, OPENAI_BASE_URL or OLLAMA_BASE_URL. */
  readonly url: string;
  /** Every request received, in order of arrival (live array). */
  readonly requests: RecordedRequest[];
  /** Requests answered with `context_length_exceeded`, with the prompt tokens counted (live array). */
  readonly overflows: Array<{ request: RecordedRequest; promptTokens: number; forced: boolean }>;
  /** With `promptCache`: the cache usage of every answered request, in order (live array). */
  readonly cacheUsage: CacheUsage[];
  /** Queues responses, answered in order. */
  enqueue(...responses: TestResponse[]): void;
  /** How many queued responses are still unused. */
  queued(): number;
  /** Replaces (or with undefined, removes) the fallback used when the queue is empty. */
  setFallback(fallback: TestFallback | undefined): void;
  /** Stops the server, cutting any open stream. */
  close(): Promise<void>;
}

/** How many pieces a text or an arguments string is split into, at least (when long enough). */
const MIN_PIECES = 3;
/** Longest piece of text or arguments in one chunk. */
const MAX_PIECE_CHARS = 16;
/** Characters per token for the default usage. */
const CHARS_PER_TOKEN = 4;
/** How long a disconnectMidStream turn waits after its first chunk before it cuts the connection. */
const DISCONNECT_DELAY_MS = 50;
/** How often a held stream (holdUntil) pings when the turn names no keepAliveMs: well under any idle timeout. */
const HOLD_PING_MS = 500;
const CHAT_COMPLETIONS_PATH = '/v1/chat/completions';

/** Starts the server on 127.0.0.1 with a random free port. */
export async function startOpenAITestServer(
  options: OpenAITestServerOptions = {},
): Promise<OpenAITestServer> {
  const queue: TestResponse[] = [];
  const requests: RecordedRequest[] = [];
  const overflows: OpenAITestServer['overflows'] = [];
  const cache = options.promptCache ? new PrefixCache(options.promptCache.minTokens ?? 0) : undefined;
  const cacheUsage: CacheUsage[] = [];
  let fallback = options.fallback;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        time: Date.now(),
        method: req.method ?? 'GET',
        path: (req.url ?? '/').split('?')[0],
        headers: req.headers,
        body: parseBody(raw),
        raw,
      };
      requests.push(recorded);
      handle(recorded, res, requests.length).catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, 500, errorBody(`openai-test-server: ${String(err)}`));
        else res.destroy();
      });
    });
  });

  async function handle(request: RecordedRequest, res: ServerResponse, requestNumber: number): Promise<void> {
    if (request.method !== 'POST' || request.path !== CHAT_COMPLETIONS_PATH) {
      sendJson(res, 404, errorBody(`openai-test-server: no route ${request.method} ${request.path}`));
      return;
    }
    const promptTokens = promptTokensOf(request.body);
    const forced = options.overflow?.(request.body, requestNumber) ?? false;
    if (forced || (options.windowTokens !== undefined && promptTokens > options.windowTokens)) {
      overflows.push({ request, promptTokens, forced });
      sendError(res, contextLengthExceeded(options.windowTokens ?? promptTokens, promptTokens));
      return;
    }
    const next = queue.shift() ?? (fallback ? await fallback(request.body, request) : undefined);
    if (next === undefined) {
      sendJson(res, 400, errorBody('openai-test-server: no response queued and no fallback set'));
      return;
    }
    if (isErrorResponse(next)) {
      sendError(res, next);
      return;
    }
    const answer = materialize(next, request.body, requestNumber);
    if (cache && next.usage === undefined) {
      const counted = cache.take(request.body);
      cacheUsage.push(counted);
      answer.usage = {
        ...answer.usage,
        prompt_tokens: counted.promptTokens,
        total_tokens: counted.promptTokens + answer.usage.completion_tokens,
      };
      answer.cachedTokens = counted.cachedTokens;
      answer.cacheWriteTokens = counted.writtenTokens;
    }
    if (request.body.stream) await streamTurn(res, answer, next, request.body);
    else sendJson(res, 200, completion(answer));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    overflows,
    cacheUsage,
    enqueue: (...responses) => {
      queue.push(...responses);
    },
    queued: () => queue.length,
    setFallback: (next) => {
      fallback = next;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Streams paused by delayMs would otherwise hold close() open until they finish.
        server.closeAllConnections();
      }),
  };
}

/**
 * The 1-based step a request belongs to, counting the assistant messages already in its prompt.
 * For a fallback that scripts a goal by step: `fallback: (body) => turns[requestStep(body) - 1]`.
 */
export function requestStep(body: ChatRequestBody): number {
  return (body.messages ?? []).filter((message) => message.role === 'assistant').length + 1;
}

/** Every message of a request as one string: what a fallback searches for a goal's objective or a word. */
export function promptText(body: ChatRequestBody): string {
  return JSON.stringify(body.messages ?? []);
}

/** Whether a request is a summarizer call: compaction asks the model with no tools offered. */
export function isSummaryRequest(body: ChatRequestBody): boolean {
  return !body.tools || body.tools.length === 0;
}

/** An error answer with an OpenAI-style body: `{ "error": { "message", "type", "code" } }`. */
export function openAIErrorResponse(
  status: number,
  message: string,
  options: { type?: string; code?: string; headers?: Record<string, string> } = {},
): TestErrorResponse {
  return { status, headers: options.headers, body: errorBody(message, options.type, options.code) };
}

/** Prompt tokens of a request as the window check counts them: its messages and tool schemas, characters / 4. */
export function promptTokensOf(body: ChatRequestBody): number {
  return estimateTokens(JSON.stringify(body.messages ?? []).length + JSON.stringify(body.tools ?? []).length);
}

/** OpenAI's answer to a prompt over the window: HTTP 400 with code `context_length_exceeded`. */
function contextLengthExceeded(windowTokens: number, promptTokens: number): TestErrorResponse {
  return openAIErrorResponse(
    400,
    `This model's maximum context length is ${windowTokens} tokens. However, your messages resulted in ` +
      `${promptTokens} tokens. Please reduce the length of the messages.`,
    { code: 'context_length_exceeded' },
  );
}

/** A turn with its ids and argument strings fixed, ready to send. */
interface Answer {
  id: string;
  model: string;
  text: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  cachedTokens?: number;
  cacheWriteTokens?: number;
}

function materialize(turn: TestTurn, body: ChatRequestBody, requestNumber: number): Answer {
  const text = turn.text ?? '';
  const toolCalls = (turn.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_${requestNumber}_${index}`,
    name: call.name,
    arguments: call.argsRaw ?? JSON.stringify(call.args ?? {}),
  }));
  const outputChars = text.length + toolCalls.reduce((sum, call) => sum + call.arguments.length, 0);
  const promptTokens =
    turn.usage?.prompt_tokens ?? estimateTokens(JSON.stringify(body.messages ?? []).length);
  const completionTokens = turn.usage?.completion_tokens ?? estimateTokens(outputChars);
  return {
    id: `chatcmpl-test-${requestNumber}`,
    model: body.model ?? 'test-model',
    text,
    toolCalls,
    finishReason: turn.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
    cachedTokens: turn.usage?.cached_tokens,
  };
}

async function streamTurn(
  res: ServerResponse,
  answer: Answer,
  turn: TestTurn,
  body: ChatRequestBody,
): Promise<void> {
  // Fires when the client goes away (abort) or close() cuts the connection: stop writing then.
  const gone = new AbortController();
  res.on('close', () => gone.abort());

  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const created = Math.floor(Date.now() / 1000);
  const send = (payload: object) => {
    if (!gone.signal.aborted) res.write(`data: ${JSON.stringify(payload)}\n\n`);
  };
  const chunk = (delta: object, finishReason: string | null = null) =>
    send({
      id: answer.id,
      object: 'chat.completion.chunk',
      created,
      model: answer.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });

  chunk({ role: 'assistant', content: null });
  if (turn.disconnectMidStream) {
    // Let the headers and the first chunk reach the client first, so it is really mid-stream.
    await new Promise<void>((resolve) => res.write('', () => resolve()));
    await sleep(DISCONNECT_DELAY_MS, gone.signal);
    res.destroy();
    return;
  }
  if (turn.holdUntil) {
    const pings = setInterval(() => {
      if (!gone.signal.aborted) res.write(': ping\n\n');
    }, turn.keepAliveMs ?? HOLD_PING_MS);
    await Promise.race([
      turn.holdUntil,
      new Promise<void>((resolve) => gone.signal.addEventListener('abort', () => resolve(), { once: true })),
    ]);
    clearInterval(pings);
    // One more at the release, so that a client's idle timer counts from it.
    if (!gone.signal.aborted) res.write(': ping\n\n');
  }
  if (turn.stallAfterFirstChunk) {
    await new Promise<void>((resolve) =>
      gone.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    return;
  }
  if (turn.delayMs && turn.keepAliveMs) {
    const pings = setInterval(() => {
      if (!gone.signal.aborted) res.write(': ping\n\n');
    }, turn.keepAliveMs);
    await sleep(turn.delayMs, gone.signal);
    clearInterval(pings);
  } else if (turn.delayMs) await sleep(turn.delayMs, gone.signal);

  for (const [index, piece] of splitPieces(answer.text).entries()) {
    if (index > 0 && turn.pieceDelayMs) await sleep(turn.pieceDelayMs, gone.signal);
    chunk({ content: piece });
  }
  if (turn.stallAfterText) {
    await new Promise<void>((resolve) =>
      gone.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    return;
  }
  if (turn.streamError) {
    send({
      error: { message: turn.streamError.message, type: turn.streamError.type, code: turn.streamError.code },
    });
    res.end();
    return;
  }
  answer.toolCalls.forEach((call, index) => {
    chunk({
      tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
    });
    for (const piece of splitPieces(call.arguments)) {
      chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
    }
  });
  chunk({}, answer.finishReason);
  if (body.stream_options?.include_usage) {
    send({
      id: answer.id,
      object: 'chat.completion.chunk',
      created,
      model: answer.model,
      choices: [],
      usage: usagePayload(answer),
    });
  }
  if (!gone.signal.aborted) res.end('data: [DONE]\n\n');
}

function completion(answer: Answer): object {
  return {
    id: answer.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: answer.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: answer.text === '' && answer.toolCalls.length > 0 ? null : answer.text,
          ...(answer.toolCalls.length > 0
            ? {
                tool_calls: answer.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        },
        finish_reason: answer.finishReason,
      },
    ],
    usage: usagePayload(answer),
  };
}

function usagePayload(answer: Answer): object {
  if (answer.cachedTokens === undefined) return answer.usage;
  const details: Record<string, number> = { cached_tokens: answer.cachedTokens };
  if (answer.cacheWriteTokens !== undefined) details.cache_write_tokens = answer.cacheWriteTokens;
  return { ...answer.usage, prompt_tokens_details: details };
}

/**
 * A provider's prefix cache, simulated: every request is a list of blocks (the tool schemas, then
 * each message, JSON-encoded), remembered in a trie; a request's cache read is the longest run of
 * leading blocks some earlier request had, at characters / 4 tokens a block.
 */
class PrefixCache {
  private readonly root = new Map<string, PrefixNode>();

  constructor(private readonly minTokens: number) {}

  take(body: ChatRequestBody): CacheUsage {
    const blocks = [JSON.stringify(body.tools ?? []), ...(body.messages ?? []).map((m) => JSON.stringify(m))];
    const tokens = blocks.map((block) => estimateTokens(block.length));
    const promptTokens = tokens.reduce((sum, n) => sum + n, 0);
    let level = this.root;
    let matched = 0;
    let seen = true;
    for (const [index, block] of blocks.entries()) {
      let node = level.get(block);
      if (node === undefined) {
        seen = false;
        node = { next: new Map() };
        level.set(block, node);
      }
      if (seen) matched += tokens[index];
      level = node.next;
    }
    const cachedTokens = matched >= this.minTokens ? matched : 0;
    return {
      promptTokens,
      cachedTokens,
      writtenTokens: promptTokens >= this.minTokens ? promptTokens - cachedTokens : 0,
    };
  }
}

interface PrefixNode {
  next: Map<string, PrefixNode>;
}

/** Splits a string into at least MIN_PIECES pieces (when it is that long) of at most MAX_PIECE_CHARS. */
function splitPieces(text: string): string[] {
  if (text === '') return [];
  const size = Math.max(1, Math.min(MAX_PIECE_CHARS, Math.ceil(text.length / MIN_PIECES)));
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

function sendError(res: ServerResponse, response: TestErrorResponse): void {
  const body = response.body ?? errorBody(STATUS_CODES[response.status] ?? `HTTP ${response.status}`);
  const isText = typeof body === 'string';
  res.writeHead(response.status, {
    'content-type': isText ? 'text/plain' : 'application/json',
    ...response.headers,
  });
  res.end(isText ? body : JSON.stringify(body));
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function errorBody(message: string, type = 'invalid_request_error', code?: string): object {
  return { error: { message, type, param: null, code: code ?? null } };
}

function isErrorResponse(response: TestResponse): response is TestErrorResponse {
  return typeof (response as TestErrorResponse).status === 'number';
}

function parseBody(raw: string): ChatRequestBody {
  if (raw === '') return {};
  try {
    return JSON.parse(raw) as ChatRequestBody;
  } catch {
    return {};
  }
}

function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
