/**
 * A provider that cannot be reached: which errors count (a refused connection, a DNS failure), and
 * the clock of provider_unreachable_minutes, which starts at the first refused connection and is
 * carried across attempts in the heartbeat details, so time spent waiting for a worker never counts.
 * The activity runs against real PostgreSQL and real HTTP (the local test server, or a closed port).
 */
import { createServer } from 'node:net';
import os from 'node:os';
import { APICallError } from '@ai-sdk/provider';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createModelStepActivity } from '../../activities/model-step-activity';
import { createModelClient } from '../../activities/providers';
import { isUnreachableError, MAX_RETRY_AFTER_MS } from '../../activities/providers/errors';
import {
  type ModelStepHeartbeat,
  modelStepFailure,
  nextUnreachableSince,
  unreachableFor,
  unreachableSinceOf,
} from '../../activities/providers/unreachable';
import type { ModelStepInput } from '../../activities/types';
import { FailureType } from '../../core/errors';
import { userText } from '../../core/messages';
import { openStore } from '../../store/open';
import type { SessionStore } from '../../store/types';
import { modelStepSession } from '../support/model-step-session';
import {
  type OpenAITestServer,
  openAIErrorResponse,
  startOpenAITestServer,
} from '../support/openai-test-server';

const MINUTE_MS = 60_000;
const UNREACHABLE_WORDING =
  /^the model provider could not be reached for 1 minute \(provider_unreachable_minutes is 1\): /;

let server: OpenAITestServer;
let store: SessionStore;

beforeAll(async () => {
  server = await startOpenAITestServer();
  store = await openStore({ databaseUrl: inject('databaseUrl'), home: os.tmpdir() });
});
afterAll(async () => {
  await store?.close();
  await server?.close();
});

/** A port on 127.0.0.1 that nothing listens on (bound once, then released). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** What a call rejected with. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (err: unknown) => err,
  );
}

/** An error as Node's fetch (undici) reports a failed connection: a TypeError with the system error as cause. */
function fetchFailure(code: string, message: string): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(message), { code }) });
}

/** A model call through the real client (AI SDK over HTTP). */
function callModel(baseUrl: string): Promise<unknown> {
  return createModelClient('openai-compatible:test-model', { baseUrl, env: {} }).stream({
    system: 'test',
    messages: [userText('hello')],
    tools: [],
    stepNumber: 1,
    abortSignal: new AbortController().signal,
  });
}

describe('isUnreachableError', () => {
  it('is true for a refused connection, over real HTTP to a closed port', async () => {
    const port = await closedPort();
    const viaClient = await rejectionOf(callModel(`http://127.0.0.1:${port}/v1`));
    expect(isUnreachableError(viaClient)).toBe(true);
    const viaFetch = await rejectionOf(fetch(`http://127.0.0.1:${port}/`));
    expect(isUnreachableError(viaFetch)).toBe(true);
  });

  it.each([
    ['ENOTFOUND', 'getaddrinfo ENOTFOUND api.example.invalid'],
    ['EAI_AGAIN', 'getaddrinfo EAI_AGAIN api.example.invalid'],
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'],
  ])('is true for %s in the cause chain', (code, message) => {
    expect(isUnreachableError(fetchFailure(code, message))).toBe(true);
    // As the AI SDK wraps it: "Cannot connect to API" with the fetch error as cause.
    const wrapped = new APICallError({
      message: `Cannot connect to API: ${message}`,
      url: 'https://api.example.invalid/v1/chat/completions',
      requestBodyValues: {},
      cause: fetchFailure(code, message),
    });
    expect(isUnreachableError(wrapped)).toBe(true);
  });

  it('is false for a stream the provider dropped, over real HTTP', async () => {
    server.enqueue({ text: 'never arrives', disconnectMidStream: true });
    const err = await rejectionOf(callModel(server.url));
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(isUnreachableError(err)).toBe(false);
  });

  it.each([500, 502, 503])('is false for HTTP %i, over real HTTP', async (status) => {
    server.enqueue(openAIErrorResponse(status, 'the server is having a bad day'));
    const err = await rejectionOf(callModel(server.url));
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(isUnreachableError(err)).toBe(false);
  });

  it('is false for a connection reset after it was made, and for other errors', () => {
    expect(isUnreachableError(fetchFailure('ECONNRESET', 'read ECONNRESET'))).toBe(false);
    expect(isUnreachableError(fetchFailure('UND_ERR_SOCKET', 'other side closed'))).toBe(false);
    expect(isUnreachableError(new Error('something else'))).toBe(false);
    expect(isUnreachableError('ECONNREFUSED as a string is no error')).toBe(false);
  });
});

describe('the unreachable clock', () => {
  const now = 1_000_000_000_000;

  it('starts at the first unreachable failure and keeps that start while the provider stays unreachable', () => {
    const first = nextUnreachableSince(null, true, now);
    expect(first).toBe(now);
    expect(nextUnreachableSince(first, true, now + 30_000)).toBe(now);
  });

  it('stops when the provider answered, however badly', () => {
    expect(nextUnreachableSince(now, false, now + 30_000)).toBeNull();
    expect(nextUnreachableSince(null, false, now)).toBeNull();
  });

  it('gives up once the provider has been unreachable for the limit, not before', () => {
    expect(unreachableFor(null, now, 1)).toBeNull();
    expect(unreachableFor(now, now + MINUTE_MS - 1, 1)).toEqual({
      unreachableMs: MINUTE_MS - 1,
      giveUp: false,
    });
    expect(unreachableFor(now, now + MINUTE_MS, 1)).toEqual({ unreachableMs: MINUTE_MS, giveUp: true });
    // A clock that went backwards between workers counts as no time, not as negative time.
    expect(unreachableFor(now, now - 5_000, 1)).toEqual({ unreachableMs: 0, giveUp: false });
  });

  it('reads the start back from heartbeat details, and nothing from anything else', () => {
    const details: ModelStepHeartbeat = { step: 3, received: 0, unreachableSinceMs: now };
    expect(unreachableSinceOf(details)).toBe(now);
    expect(unreachableSinceOf({ step: 3, received: 10, unreachableSinceMs: null })).toBeNull();
    // Details of a goalrun before this change carried only step and received.
    expect(unreachableSinceOf({ step: 3, received: 10 })).toBeNull();
    expect(unreachableSinceOf(undefined)).toBeNull();
    expect(unreachableSinceOf({ unreachableSinceMs: 'yesterday' })).toBeNull();
  });
});

describe('modelStepFailure', () => {
  const now = 1_000_000_000_000;
  const goal = { model: 'openai-compatible:nobody', providerUnreachableMinutes: 1 };
  const refused = fetchFailure('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9');

  it('retries a provider unreachable for less than the limit, and gives up with a reason at the limit', () => {
    const retried = modelStepFailure(refused, goal, now - MINUTE_MS + 1, now);
    expect(retried).toMatchObject({ type: FailureType.ProviderUnavailable, nonRetryable: false });
    const given = modelStepFailure(refused, goal, now - MINUTE_MS, now);
    expect(given).toMatchObject({ type: FailureType.ProviderUnreachable, nonRetryable: true });
    expect(given.message).toMatch(UNREACHABLE_WORDING);
    expect(given.message).toContain('openai-compatible model nobody: network error');
  });

  it('never gives up on an unreachable clock that is not running, and leaves final failures as they are', () => {
    expect(modelStepFailure(refused, goal, null, now).type).toBe(FailureType.ProviderUnavailable);
    const auth = ApplicationFailure.create({
      type: FailureType.ProviderAuth,
      message: 'no',
      nonRetryable: true,
    });
    expect(modelStepFailure(auth, goal, now - 10 * MINUTE_MS, now)).toBe(auth);
  });
});

describe('the model step against a provider that cannot be reached', () => {
  /** A stored session and step 1's input for it, against `baseUrl`. */
  function stepInput(baseUrl: string): Promise<ModelStepInput> {
    return modelStepSession(store, 'unreachable', 'talk to nobody', {
      baseUrl,
      providerUnreachableMinutes: 1,
    });
  }

  /** Runs one attempt of the step; returns what it failed with and the heartbeats it sent. */
  async function attempt(
    input: ModelStepInput,
    info: ConstructorParameters<typeof MockActivityEnvironment>[0],
  ) {
    const activity = createModelStepActivity({ store, env: {} });
    const environment = new MockActivityEnvironment(info);
    const heartbeats: ModelStepHeartbeat[] = [];
    environment.on('heartbeat', (details: ModelStepHeartbeat) => heartbeats.push(details));
    const failure = await rejectionOf(environment.run(activity.modelStep, input));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    return { failure: failure as ApplicationFailure, heartbeats };
  }

  it('does not count the time the step waited for a worker: a first refused connection is retried', async () => {
    const input = await stepInput(`http://127.0.0.1:${await closedPort()}/v1`);
    const before = Date.now();
    // Scheduled ten minutes ago (no worker polled), and the first attempt to reach the provider now.
    const { failure, heartbeats } = await attempt(input, {
      attempt: 1,
      scheduledTimestampMs: before - 10 * MINUTE_MS,
      currentAttemptScheduledTimestampMs: before - 10 * MINUTE_MS,
      heartbeatDetails: undefined,
    });
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.nonRetryable).toBe(false);
    // The clock starts now, and goes to the next attempt with the last heartbeat.
    const since = heartbeats.at(-1)?.unreachableSinceMs;
    expect(since).toBeGreaterThanOrEqual(before);
    expect(since).toBeLessThanOrEqual(Date.now());
  });

  it('keeps the start carried from earlier attempts, and fails for good once it is the limit ago', async () => {
    const input = await stepInput(`http://127.0.0.1:${await closedPort()}/v1`);
    const since = Date.now() - MINUTE_MS - 1_000;
    const { failure, heartbeats } = await attempt(input, {
      attempt: 7,
      scheduledTimestampMs: since,
      heartbeatDetails: { step: 1, received: 0, unreachableSinceMs: since },
    });
    expect(failure.type).toBe(FailureType.ProviderUnreachable);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toMatch(UNREACHABLE_WORDING);
    expect(heartbeats.at(-1)?.unreachableSinceMs).toBe(since);
  });

  it('starts over when the provider answers, even with an error', async () => {
    const input = await stepInput(server.url);
    server.enqueue(openAIErrorResponse(503, 'overloaded'));
    const since = Date.now() - 2 * MINUTE_MS;
    const { failure, heartbeats } = await attempt(input, {
      attempt: 7,
      scheduledTimestampMs: since,
      heartbeatDetails: { step: 1, received: 0, unreachableSinceMs: since },
    });
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.nonRetryable).toBe(false);
    expect(heartbeats.at(-1)?.unreachableSinceMs).toBeNull();
  });
});

describe('an exhausted quota and the goal that meets it', () => {
  const quota = () =>
    new APICallError({
      message: 'quota',
      url: 'http://127.0.0.1/v1/chat/completions',
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { 'retry-after': '7200' },
      responseBody: '{"error":{"code":"insufficient_quota"}}',
    });

  it('is QuotaExhausted, not retried, for a goal that waits it out', () => {
    const failure = modelStepFailure(
      quota(),
      { model: 'openai:gpt-4o', waitsOutQuota: true },
      null,
      Date.now(),
    );
    expect(failure.type).toBe(FailureType.QuotaExhausted);
    expect(failure.nonRetryable).toBe(true);
  });

  it('stays the retryable outage a goal of 0.1.0 knows, retried after the reset', () => {
    const failure = modelStepFailure(quota(), { model: 'openai:gpt-4o' }, null, Date.now());
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.nonRetryable).toBe(false);
    expect(Number(failure.nextRetryDelay)).toBe(MAX_RETRY_AFTER_MS);
  });
});
