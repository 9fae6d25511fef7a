/**
 * The failover count survives a lost heartbeat: each failed attempt of a model step records a
 * model-error event saying whether its failure counted, and an attempt whose carried heartbeat does
 * not account for the attempt before it reads that event. Without it the step would ask a failing
 * provider once more than the rule says, which `test:stress` saw as a goal that finished on its
 * primary model (temporalio/temporal#8376: a heartbeat sent just before a failure can be lost).
 * The activity runs against real PostgreSQL and real HTTP (the local test server).
 */
import os from 'node:os';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { FailoverHeartbeat } from '../../activities/failover-count';
import { createModelStepActivity } from '../../activities/model-step-activity';
import type { ModelStepInput } from '../../activities/types';
import { FailureType } from '../../core/errors';
import { storeKeys } from '../../core/store-keys';
import { openStore } from '../../store/open';
import type { SessionStore } from '../../store/types';
import { modelStepSession } from '../support/model-step-session';
import {
  type OpenAITestServer,
  openAIErrorResponse,
  startOpenAITestServer,
} from '../support/openai-test-server';

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

/** A stored session and step 1's input for it, with a rule that switches after two failures. */
function stepInput(): Promise<ModelStepInput> {
  return modelStepSession(store, 'lost-heartbeat', 'answer while overloaded', {
    baseUrl: server.url,
    failover: { afterFailures: 2, afterMinutes: 60 },
  });
}

/** Runs one attempt against an overloaded provider; returns its failure and the heartbeats it sent. */
async function overloadedAttempt(input: ModelStepInput, attempt: number, heartbeatDetails: unknown) {
  server.enqueue(openAIErrorResponse(503, 'The server is overloaded'));
  const environment = new MockActivityEnvironment({ attempt, heartbeatDetails });
  const heartbeats: FailoverHeartbeat[] = [];
  environment.on('heartbeat', (details: FailoverHeartbeat) => heartbeats.push(details));
  const failure = await environment.run(createModelStepActivity({ store, env: {} }).modelStep, input).then(
    () => {
      throw new Error('expected the attempt to fail');
    },
    (err: unknown) => err,
  );
  expect(failure).toBeInstanceOf(ApplicationFailure);
  return { failure: failure as ApplicationFailure, heartbeats };
}

describe('the failover count when the last heartbeat of an attempt was lost', () => {
  it('records whether each failure counted, and names the attempt in the last heartbeat', async () => {
    const input = await stepInput();
    const first = await overloadedAttempt(input, 1, undefined);
    expect(first.failure.type).toBe(FailureType.ProviderUnavailable);
    expect(first.failure.nonRetryable).toBe(false);
    expect(first.heartbeats[0]).toMatchObject({ failoverFailures: 0, failoverSeenAttempt: 0 });
    expect(first.heartbeats.at(-1)).toMatchObject({ failoverFailures: 1, failoverSeenAttempt: 1 });
    const event = await store.getEventByKey(input.sessionId, storeKeys.modelErrorEvent(1, 1, 1));
    expect(event?.data).toMatchObject({ attempt: 1, failover: true, retryable: true });
  });

  it('counts the failure of an attempt whose last heartbeat did not arrive', async () => {
    const input = await stepInput();
    const first = await overloadedAttempt(input, 1, undefined);
    // The server kept the attempt's first heartbeat, sent before its request, and lost the last.
    const second = await overloadedAttempt(input, 2, first.heartbeats[0]);
    expect(second.failure.type).toBe(FailureType.ProviderOutage);
    expect(second.failure.nonRetryable).toBe(true);
    expect(second.failure.message).toMatch(/^2 provider failures in a row; switching to the backup model/);
  });

  it('counts it once when the last heartbeat did arrive', async () => {
    const input = await stepInput();
    const first = await overloadedAttempt(input, 1, undefined);
    const second = await overloadedAttempt(input, 2, first.heartbeats.at(-1));
    expect(second.failure.type).toBe(FailureType.ProviderOutage);
    expect(second.failure.message).toMatch(/^2 provider failures in a row/);
  });

  it('counts nothing for an attempt that left no event (it crashed before writing one)', async () => {
    const input = await stepInput();
    const first = await overloadedAttempt(input, 1, undefined);
    // Attempt 2 died without a trace; attempt 3 carries attempt 1's last heartbeat.
    const third = await overloadedAttempt(input, 3, first.heartbeats.at(-1));
    expect(third.failure.type).toBe(FailureType.ProviderOutage);
    expect(third.failure.message).toMatch(/^2 provider failures in a row/);
    // With attempt 1's first heartbeat only, attempt 1's event fills the gap and attempt 2's is absent.
    const other = await stepInput();
    const lone = await overloadedAttempt(other, 1, undefined);
    const after = await overloadedAttempt(other, 3, lone.heartbeats[0]);
    expect(after.failure.type).toBe(FailureType.ProviderOutage);
  });
});
