/**
 * Decoding the JSON of Temporal's HTTP API (the frontend's grpc-gateway: protobuf's JSON mapping,
 * enums by name, 64-bit integers as strings, timestamps as RFC 3339) into the reader's types. Pure,
 * and checked by hand rather than with zod, which alone would add a twentieth of a second to every
 * light command (issue 10). Anything unexpected throws {@link TemporalHttpError}.
 *
 * Payloads: the CLI asks for them in full (`?noPayloadShorthand`), because the shorthand re-encodes
 * JSON through Go maps and turns empty lists into null (`"dependencies": []` arrives as `null`).
 * The shorthand is still understood, for a server that ignores the parameter. Encrypted payloads
 * (docs/security.md) are decrypted with the process's payload keys; without the key a payload is an
 * error that names it.
 */

import { clip } from '../core/text';
import { decryptPayload, ENCRYPTED_ENCODING, PayloadCodecError } from '../worker/payload-codec';
import type { PayloadKey } from '../worker/payload-keys';
import type { PlainPayload } from '../worker/payload-proto';
import type { HistoryStart, ListedWorkflow, PendingActivity, WorkflowSummary } from './temporal-reader';

/** gRPC status code NOT_FOUND, as the gateway reports it in an error body's `code`. */
export const GRPC_NOT_FOUND = 5;

const JSON_ENCODING = 'json/plain';
const NULL_ENCODING = 'binary/null';
const STARTED_EVENT = 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED';
const TASK_COMPLETED_EVENT = 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED';
const TASK_FAILED_EVENT = 'EVENT_TYPE_WORKFLOW_TASK_FAILED';
const STATUS_PREFIX = 'WORKFLOW_EXECUTION_STATUS_';

/** A failed or unexpected answer of the HTTP API: the HTTP status and gRPC code when there was one. */
export class TemporalHttpError extends Error {
  constructor(
    message: string,
    readonly httpStatus?: number,
    readonly grpcCode?: number,
  ) {
    super(message);
    this.name = 'TemporalHttpError';
  }

  /** Whether the server said the workflow (or whatever was asked for) does not exist. */
  get notFound(): boolean {
    return this.grpcCode === GRPC_NOT_FOUND || (this.grpcCode === undefined && this.httpStatus === 404);
  }
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectAt(value: unknown, what: string): Json {
  if (!isObject(value))
    throw new TemporalHttpError(`unexpected answer from Temporal: ${what} is not an object`);
  return value;
}

function optionalObject(value: unknown, what: string): Json {
  return value === undefined || value === null ? {} : objectAt(value, what);
}

function listAt(value: unknown, what: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw new TemporalHttpError(`unexpected answer from Temporal: ${what} is not a list`);
  return value;
}

function stringAt(value: unknown, what: string): string {
  if (typeof value !== 'string')
    throw new TemporalHttpError(`unexpected answer from Temporal: ${what} is not a string`);
  return value;
}

function optionalString(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** A protobuf Timestamp in JSON (RFC 3339), as ms since the epoch; null when absent or unreadable. */
export function timestampMs(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

/** The SDK's name of a workflow status enum value (`WORKFLOW_EXECUTION_STATUS_CANCELED` → `CANCELLED`). */
export function statusNameOf(value: unknown): string {
  if (value === undefined) return 'UNSPECIFIED';
  if (typeof value !== 'string') return 'UNKNOWN';
  const name = value.startsWith(STATUS_PREFIX) ? value.slice(STATUS_PREFIX.length) : value;
  return name === 'CANCELED' ? 'CANCELLED' : name;
}

/** Whether a JSON value is a payload in full form, by the rule Temporal's own decoder applies to shorthand. */
function isFullPayload(value: unknown): value is Json {
  if (!isObject(value) || !isObject(value.metadata) || typeof value.metadata.encoding !== 'string')
    return false;
  const keys = Object.keys(value);
  return keys.length === 2 ? typeof value.data === 'string' : keys.length === 1;
}

/** A payload's metadata and data as bytes, from its full JSON form. */
function payloadBytes(payload: unknown): PlainPayload {
  const { metadata, data } = objectAt(payload, 'a payload');
  const entries = Object.entries(objectAt(metadata, 'payload metadata')).map(
    ([key, value]) => [key, Buffer.from(stringAt(value, `payload metadata ${key}`), 'base64')] as const,
  );
  return {
    metadata: Object.fromEntries(entries),
    data: data === undefined ? Buffer.alloc(0) : Buffer.from(stringAt(data, 'payload data'), 'base64'),
  };
}

/** The value of a payload in bytes. Only JSON and null are goalrun's. */
function payloadValue(payload: PlainPayload, keys: readonly PayloadKey[]): unknown {
  const encoding = Buffer.from(payload.metadata?.encoding ?? []).toString('utf8');
  // Throws PayloadCodecError, which names the key, when it cannot be opened.
  if (encoding === ENCRYPTED_ENCODING) return payloadValue(decryptPayload(payload, keys), keys);
  if (encoding === NULL_ENCODING) return null;
  if (encoding !== JSON_ENCODING)
    throw new TemporalHttpError(`cannot decode a payload encoded as ${encoding}`);
  try {
    return JSON.parse(Buffer.from(payload.data ?? []).toString('utf8'));
  } catch {
    throw new TemporalHttpError('a json/plain payload holds no valid JSON');
  }
}

/**
 * One payload in full form: `{metadata: {encoding: base64, …}, data: base64}`, decrypted with `keys`
 * when it is encrypted.
 */
export function decodePayload(payload: unknown, keys: readonly PayloadKey[] = []): unknown {
  return payloadValue(payloadBytes(payload), keys);
}

/** A `Payloads` message: `{payloads: [...]}` in full form, a list of values in shorthand, or nothing. */
export function decodePayloads(value: unknown, keys: readonly PayloadKey[] = []): unknown[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value))
    return value.map((item) => (isFullPayload(item) ? decodePayload(item, keys) : item));
  return listAt(objectAt(value, 'payloads').payloads, 'payloads').map((item) => decodePayload(item, keys));
}

/** A failure's message; with encrypting workers it is in the failure's encoded attributes. */
function failureMessageOf(failure: Json, keys: readonly PayloadKey[]): string {
  if (failure.encodedAttributes) {
    try {
      const attributes = decodePayload(failure.encodedAttributes, keys) as { message?: unknown } | null;
      if (typeof attributes?.message === 'string') return attributes.message;
    } catch (err) {
      return (err as Error).message;
    }
  }
  return optionalString(failure.message) ?? '';
}

/** The body of a failed call: `{code, message}` from the gateway, or whatever text came back. */
export function errorFromResponse(httpStatus: number, text: string): TemporalHttpError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  if (isObject(body) && typeof body.message === 'string') {
    const code = typeof body.code === 'number' ? body.code : undefined;
    return new TemporalHttpError(body.message, httpStatus, code);
  }
  return new TemporalHttpError(`Temporal's HTTP API answered ${httpStatus}: ${clip(text, 200)}`, httpStatus);
}

/** DescribeWorkflowExecutionResponse → WorkflowSummary. */
export function decodeDescribe(json: unknown, keys: readonly PayloadKey[] = []): WorkflowSummary {
  const describe = objectAt(json, 'the description');
  const info = objectAt(describe.workflowExecutionInfo, 'workflowExecutionInfo');
  const pending = listAt(describe.pendingActivities, 'pendingActivities');
  const versioning = optionalObject(info.versioningInfo, 'versioningInfo');
  const build = optionalString(optionalObject(versioning.deploymentVersion, 'deploymentVersion').buildId);
  return {
    status: statusNameOf(info.status),
    taskQueue: optionalString(info.taskQueue) ?? '',
    ...(build ? { build } : {}),
    pendingActivities: pending.map((item, index): PendingActivity => {
      const activity = objectAt(item, `pending activity ${index}`);
      const failure = optionalObject(activity.lastFailure, 'lastFailure');
      return {
        activityType:
          optionalString(optionalObject(activity.activityType, 'activityType').name) ?? 'activity',
        attempt: typeof activity.attempt === 'number' ? activity.attempt : 0,
        lastFailure: activity.lastFailure ? failureMessageOf(failure, keys) : null,
        state: activityStateOf(activity.state),
        lastAliveMs: timestampMs(activity.lastHeartbeatTime) ?? timestampMs(activity.lastStartedTime),
      };
    }),
    workflowTaskAttempt: attemptOf(optionalObject(describe.pendingWorkflowTask, 'pendingWorkflowTask')),
  };
}

/** PENDING_ACTIVITY_STATE_STARTED → `started`; undefined when absent or unknown. */
export function activityStateOf(value: unknown): PendingActivity['state'] {
  const name = String(value ?? '')
    .replace(/^PENDING_ACTIVITY_STATE_/, '')
    .toLowerCase();
  return name === 'scheduled' || name === 'started' || name === 'cancel_requested' ? name : undefined;
}

function attemptOf(task: Record<string, unknown>): number {
  return typeof task.attempt === 'number' ? task.attempt : 0;
}

/**
 * A page of the history read from its end → why the last workflow task failed, when no task
 * completed after it; null otherwise.
 */
export function decodeLastWorkflowTaskFailure(
  json: unknown,
  keys: readonly PayloadKey[] = [],
): string | null {
  const history = optionalObject(objectAt(json, 'the history page').history, 'history');
  for (const item of listAt(history.events, 'history events')) {
    const event = objectAt(item, 'history event');
    if (event.eventType === TASK_COMPLETED_EVENT) return null;
    if (event.eventType !== TASK_FAILED_EVENT) continue;
    const failed = optionalObject(
      event.workflowTaskFailedEventAttributes,
      'workflowTaskFailedEventAttributes',
    );
    return failureMessageOf(optionalObject(failed.failure, 'failure'), keys);
  }
  return null;
}

/** The first page of GetWorkflowExecutionHistoryResponse → HistoryStart. */
export function decodeHistoryStart(json: unknown, keys: readonly PayloadKey[] = []): HistoryStart {
  const history = optionalObject(objectAt(json, 'the history page').history, 'history');
  const events = listAt(history.events, 'history events').map((event, index) =>
    objectAt(event, `history event ${index}`),
  );
  const started = events.find((event) => event.eventType === STARTED_EVENT);
  const attributes = optionalObject(
    started?.workflowExecutionStartedEventAttributes,
    'workflowExecutionStartedEventAttributes',
  );
  let input: unknown = null;
  try {
    input = decodePayloads(attributes.input, keys)[0] ?? null;
  } catch (err) {
    // A payload this process has no key for says so; anything else unreadable is simply unknown.
    if (err instanceof PayloadCodecError) throw err;
    input = null;
  }
  const startedMs = timestampMs(started?.eventTime);
  let workflowTaskFailure: string | null = null;
  for (const event of events) {
    if (event.eventType === TASK_COMPLETED_EVENT) workflowTaskFailure = null;
    if (event.eventType !== TASK_FAILED_EVENT) continue;
    const failed = optionalObject(
      event.workflowTaskFailedEventAttributes,
      'workflowTaskFailedEventAttributes',
    );
    workflowTaskFailure = failureMessageOf(optionalObject(failed.failure, 'failure'), keys);
  }
  return {
    eventCount: events.length,
    workflowTaskCompleted: events.some((event) => event.eventType === TASK_COMPLETED_EVENT),
    workflowTaskFailure,
    // To the second, as the gRPC path reads it.
    startedAt: startedMs === null ? null : new Date(Math.floor(startedMs / 1000) * 1000),
    taskQueue: optionalString(optionalObject(attributes.taskQueue, 'taskQueue').name),
    input,
  };
}

/** QueryWorkflowResponse → the query's answer (its first payload), as the SDK's handle.query() returns it. */
export function decodeQueryResult(json: unknown, keys: readonly PayloadKey[] = []): unknown {
  const response = objectAt(json, 'the query response');
  if (response.queryRejected) throw new TemporalHttpError('the query was rejected');
  if (response.queryResult === undefined || response.queryResult === null) {
    throw new TemporalHttpError('unexpected answer from Temporal: the query response has no result');
  }
  return decodePayloads(response.queryResult, keys)[0];
}

/** A page of ListWorkflowExecutionsResponse. */
export function decodeWorkflowList(json: unknown): {
  workflows: ListedWorkflow[];
  nextPageToken: string | null;
} {
  const response = objectAt(json, 'the workflow list');
  const workflows = listAt(response.executions, 'executions').map((item, index): ListedWorkflow => {
    const execution = objectAt(item, `execution ${index}`);
    const startedMs = timestampMs(execution.startTime);
    return {
      workflowId: stringAt(objectAt(execution.execution, 'execution').workflowId, 'workflowId'),
      startedAt: new Date(startedMs ?? 0),
      taskQueue: optionalString(execution.taskQueue) ?? '',
    };
  });
  const token = optionalString(response.nextPageToken);
  return { workflows, nextPageToken: token === '' ? null : token };
}

/** DescribeTaskQueueResponse → when each poller last polled (pollers without a time are left out). */
export function decodePollerAccessTimes(json: unknown): number[] {
  return listAt(objectAt(json, 'the task queue').pollers, 'pollers').flatMap((poller, index) => {
    const ms = timestampMs(objectAt(poller, `poller ${index}`).lastAccessTime);
    return ms === null ? [] : [ms];
  });
}
