/**
 * Decoding the JSON of Temporal's HTTP API (cli/temporal-http-decode.ts): the shapes below are those
 * the dev server sends (captured from `temporal server start-dev --http-port`), trimmed to what matters.
 */
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  decodeDescribe,
  decodeHistoryStart,
  decodePayload,
  decodePayloads,
  decodePollerAccessTimes,
  decodeQueryResult,
  decodeWorkflowList,
  errorFromResponse,
  statusNameOf,
  TemporalHttpError,
  timestampMs,
} from '../../cli/temporal-http-decode';
import { encryptPayload, PayloadCodecError } from '../../worker/payload-codec';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
/** A payload in full form, as `?noPayloadShorthand` sends it. */
const jsonPayload = (value: unknown) => ({
  metadata: { encoding: b64('json/plain') },
  data: b64(JSON.stringify(value)),
});
const NULL_PAYLOAD = { metadata: { encoding: b64('binary/null') } };

describe('payloads', () => {
  it('decodes full JSON payloads exactly, empty lists included', () => {
    const tasks = [{ id: 'a', dependencies: [], blocked_by: [], ready: true }];
    expect(decodePayload(jsonPayload(tasks))).toEqual(tasks);
    expect(decodePayloads({ payloads: [jsonPayload(tasks), jsonPayload(2)] })).toEqual([tasks, 2]);
  });

  it('reads binary/null as null, and nothing as no payloads', () => {
    expect(decodePayload(NULL_PAYLOAD)).toBeNull();
    expect(decodePayloads(undefined)).toEqual([]);
    expect(decodePayloads(null)).toEqual([]);
    expect(decodePayloads({})).toEqual([]);
  });

  it('understands the shorthand too: plain values, with full payloads mixed in', () => {
    expect(decodePayloads([{ a: 1 }, 'x', null])).toEqual([{ a: 1 }, 'x', null]);
    expect(decodePayloads([NULL_PAYLOAD, jsonPayload({ b: 2 })])).toEqual([null, { b: 2 }]);
    // An object with other keys than metadata and data is a value, not a payload.
    expect(decodePayloads([{ metadata: { encoding: 'x' }, data: 'y', more: 1 }])).toEqual([
      { metadata: { encoding: 'x' }, data: 'y', more: 1 },
    ]);
  });

  it('refuses encodings goalrun never writes, and JSON payloads that hold no JSON', () => {
    expect(() => decodePayload({ metadata: { encoding: b64('binary/plain') }, data: b64('raw') })).toThrow(
      /binary\/plain/,
    );
    expect(() => decodePayload({ metadata: { encoding: b64('json/plain') }, data: b64('{nope') })).toThrow(
      TemporalHttpError,
    );
    expect(() => decodePayloads({ payloads: 'many' })).toThrow(/not a list/);
  });
});

describe('errors', () => {
  it('keeps the gateway code and message, and knows not-found', () => {
    const notFound = errorFromResponse(
      404,
      '{"code":5,"message":"workflow not found for ID: goalrun-x","details":[{"@type":"type.googleapis.com/temporal.api.errordetails.v1.NotFoundFailure"}]}',
    );
    expect(notFound).toMatchObject({
      httpStatus: 404,
      grpcCode: 5,
      message: 'workflow not found for ID: goalrun-x',
    });
    expect(notFound.notFound).toBe(true);
    const timeout = errorFromResponse(
      504,
      '{"code":4,"message":"query timed out before a worker could process it"}',
    );
    expect(timeout.notFound).toBe(false);
    expect(timeout.message).toContain('timed out');
    // A proxy's 404 page is still "not found"; a 500 without JSON keeps its text.
    expect(errorFromResponse(404, '<html>not here</html>').notFound).toBe(true);
    expect(errorFromResponse(500, 'boom').message).toMatch(/answered 500: boom/);
  });
});

describe('statuses and timestamps', () => {
  it('names statuses as the SDK does', () => {
    expect(statusNameOf('WORKFLOW_EXECUTION_STATUS_RUNNING')).toBe('RUNNING');
    expect(statusNameOf('WORKFLOW_EXECUTION_STATUS_CANCELED')).toBe('CANCELLED');
    expect(statusNameOf('WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW')).toBe('CONTINUED_AS_NEW');
    expect(statusNameOf(undefined)).toBe('UNSPECIFIED');
    expect(statusNameOf(3)).toBe('UNKNOWN');
  });

  it('reads RFC 3339 with nanoseconds', () => {
    expect(timestampMs('2026-12-01T20:20:18.252988033Z')).toBe(Date.UTC(2026, 11, 1, 20, 20, 18, 252));
    expect(timestampMs('not a time')).toBeNull();
    expect(timestampMs(undefined)).toBeNull();
  });
});

describe('describe', () => {
  it('gives status, task queue and pending activities with their last failure', () => {
    const summary = decodeDescribe({
      executionConfig: { taskQueue: { name: 'q', kind: 'TASK_QUEUE_KIND_NORMAL' } },
      workflowExecutionInfo: {
        execution: { workflowId: 'goalrun-s', runId: 'r' },
        status: 'WORKFLOW_EXECUTION_STATUS_RUNNING',
        historyLength: '38',
        taskQueue: 'q',
      },
      pendingActivities: [
        {
          activityId: '5',
          activityType: { name: 'modelStep' },
          attempt: 3,
          lastFailure: { message: 'ECONNREFUSED', source: 'TypeScriptSDK' },
        },
        {
          activityId: '6',
          activityType: { name: 'runTool' },
          state: 'PENDING_ACTIVITY_STATE_STARTED',
          attempt: 1,
          lastStartedTime: '2026-01-01T12:00:00Z',
          lastHeartbeatTime: '2026-01-01T12:00:05.500Z',
        },
      ],
      pendingWorkflowTask: { state: 'PENDING_WORKFLOW_TASK_STATE_SCHEDULED', attempt: 4 },
    });
    expect(summary).toEqual({
      status: 'RUNNING',
      taskQueue: 'q',
      pendingActivities: [
        { activityType: 'modelStep', attempt: 3, lastFailure: 'ECONNREFUSED', lastAliveMs: null },
        {
          activityType: 'runTool',
          attempt: 1,
          lastFailure: null,
          state: 'started',
          lastAliveMs: Date.parse('2026-01-01T12:00:05.500Z'),
        },
      ],
      workflowTaskAttempt: 4,
    });
  });

  it('takes a closed workflow without pending activities, and refuses a body that is no description', () => {
    expect(
      decodeDescribe({
        workflowExecutionInfo: { status: 'WORKFLOW_EXECUTION_STATUS_COMPLETED', taskQueue: 'q' },
      }),
    ).toEqual({ status: 'COMPLETED', taskQueue: 'q', pendingActivities: [], workflowTaskAttempt: 0 });
    expect(() => decodeDescribe({ something: 'else' })).toThrow(/workflowExecutionInfo/);
    expect(() => decodeDescribe([])).toThrow(TemporalHttpError);
  });
});

describe('the first page of a history', () => {
  const input = {
    goal: { objective: 'say hi', model: 'scripted:/x.json', workspace: '/ws', sandbox: { env: [] } },
  };
  const started = {
    eventId: '1',
    eventTime: '2026-12-01T20:20:18.752988033Z',
    eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
    workflowExecutionStartedEventAttributes: {
      workflowType: { name: 'goalWorkflow' },
      taskQueue: { name: 'goalrun-abc', kind: 'TASK_QUEUE_KIND_NORMAL' },
      input: { payloads: [jsonPayload(input)] },
    },
  };
  const scheduled = { eventId: '2', eventType: 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED' };
  const completed = { eventId: '4', eventType: 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED' };

  it('says what the goal was started with, and when, to the second', () => {
    expect(decodeHistoryStart({ history: { events: [started, scheduled] } })).toEqual({
      eventCount: 2,
      workflowTaskCompleted: false,
      startedAt: new Date(Date.UTC(2026, 11, 1, 20, 20, 18)),
      taskQueue: 'goalrun-abc',
      input,
      workflowTaskFailure: null,
    });
  });

  it('sees a completed workflow task', () => {
    expect(
      decodeHistoryStart({ history: { events: [started, scheduled, completed] } }).workflowTaskCompleted,
    ).toBe(true);
  });

  it('leaves out an input it cannot decode, and copes with an empty page', () => {
    const binary = {
      ...started,
      workflowExecutionStartedEventAttributes: {
        ...started.workflowExecutionStartedEventAttributes,
        input: { payloads: [{ metadata: { encoding: b64('binary/plain') }, data: b64('x') }] },
      },
    };
    expect(decodeHistoryStart({ history: { events: [binary] } }).input).toBeNull();
    expect(decodeHistoryStart({})).toEqual({
      eventCount: 0,
      workflowTaskCompleted: false,
      startedAt: null,
      taskQueue: null,
      input: null,
      workflowTaskFailure: null,
    });
  });

  it('says why the last workflow task failed, until one completes', () => {
    const failed = (message: string) => ({
      eventType: 'EVENT_TYPE_WORKFLOW_TASK_FAILED',
      workflowTaskFailedEventAttributes: { failure: { message } },
    });
    expect(
      decodeHistoryStart({ history: { events: [started, scheduled, failed('cannot decrypt a payload')] } })
        .workflowTaskFailure,
    ).toBe('cannot decrypt a payload');
    expect(
      decodeHistoryStart({ history: { events: [started, failed('first'), completed] } }).workflowTaskFailure,
    ).toBeNull();
  });
});

describe('encrypted payloads', () => {
  const keys = [{ id: 'k1', key: randomBytes(32) }];
  /** A payload as an encrypting worker leaves it, in the HTTP API's JSON form. */
  const sealed = (value: unknown, key = keys[0]) => {
    const payload = encryptPayload(defaultPayloadConverter.toPayload(value), key);
    return {
      metadata: Object.fromEntries(
        Object.entries(payload.metadata ?? {}).map(([name, bytes]) => [
          name,
          Buffer.from(bytes).toString('base64'),
        ]),
      ),
      data: Buffer.from(payload.data ?? []).toString('base64'),
    };
  };

  it('are decrypted with the payload keys: inputs, query answers, failure messages', () => {
    const input = { goal: { objective: 'a sealed objective' } };
    expect(decodePayload(sealed(input), keys)).toEqual(input);
    expect(decodeQueryResult({ queryResult: { payloads: [sealed({ status: 'running' })] } }, keys)).toEqual({
      status: 'running',
    });
    const describe = decodeDescribe(
      {
        workflowExecutionInfo: { status: 'WORKFLOW_EXECUTION_STATUS_RUNNING', taskQueue: 'q' },
        pendingActivities: [
          {
            activityType: { name: 'modelStep' },
            attempt: 2,
            lastFailure: {
              message: 'Encoded failure',
              encodedAttributes: sealed({ message: 'provider answered 503', stack_trace: '' }),
            },
          },
        ],
      },
      keys,
    );
    expect(describe.pendingActivities[0].lastFailure).toBe('provider answered 503');
  });

  it('without the key are an error that names it; the history start says so too', () => {
    expect(() => decodePayload(sealed('x'))).toThrow(/key "k1": it is not among the payload keys/);
    const history = {
      history: {
        events: [
          {
            eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
            workflowExecutionStartedEventAttributes: { input: { payloads: [sealed({ goal: {} })] } },
          },
        ],
      },
    };
    expect(() => decodeHistoryStart(history)).toThrow(PayloadCodecError);
    expect(decodeHistoryStart(history, keys).input).toEqual({ goal: {} });
  });
});

describe('query results', () => {
  it('is the first payload of the result', () => {
    const state = { sessionId: 's', status: 'running', recent: [] };
    expect(decodeQueryResult({ queryResult: { payloads: [jsonPayload(state)] } })).toEqual(state);
    expect(decodeQueryResult({ queryResult: { payloads: [NULL_PAYLOAD] } })).toBeNull();
    expect(decodeQueryResult({ queryResult: [state] })).toEqual(state);
  });

  it('fails when the query was rejected or the answer has no result', () => {
    expect(() =>
      decodeQueryResult({ queryRejected: { status: 'WORKFLOW_EXECUTION_STATUS_COMPLETED' } }),
    ).toThrow(/rejected/);
    expect(() => decodeQueryResult({})).toThrow(/no result/);
  });
});

describe('lists and pollers', () => {
  it('lists workflows with their start time, task queue and the next page', () => {
    const page = decodeWorkflowList({
      executions: [
        {
          execution: { workflowId: 'goalrun-a', runId: 'r' },
          type: { name: 'goalWorkflow' },
          startTime: '2026-12-01T20:20:51.546412Z',
          status: 'WORKFLOW_EXECUTION_STATUS_RUNNING',
          taskQueue: 'q',
        },
      ],
      nextPageToken: 'CiQ=',
    });
    expect(page).toEqual({
      workflows: [
        {
          workflowId: 'goalrun-a',
          startedAt: new Date(Date.UTC(2026, 11, 1, 20, 20, 51, 546)),
          taskQueue: 'q',
        },
      ],
      nextPageToken: 'CiQ=',
    });
    expect(decodeWorkflowList({})).toEqual({ workflows: [], nextPageToken: null });
    expect(() => decodeWorkflowList({ executions: [{ execution: {} }] })).toThrow(/workflowId/);
  });

  it('gives when each poller last polled, and none for a queue nobody polls', () => {
    expect(
      decodePollerAccessTimes({
        pollers: [
          { lastAccessTime: '2026-12-01T20:20:51.559045357Z', identity: '1@vm', ratePerSecond: 100000 },
          { identity: 'no time' },
        ],
      }),
    ).toEqual([Date.UTC(2026, 11, 1, 20, 20, 51, 559)]);
    expect(decodePollerAccessTimes({ versioningInfo: { currentVersion: '__unversioned__' } })).toEqual([]);
  });
});
