/**
 * Issue 24 item 4 at the model-step activity, over real HTTP (the OpenAI test server) and real
 * PostgreSQL: an attempt the provider billed without an answer the goal used is recorded in the daily
 * ledger at its reservation (or its reported usage), once, whether it recorded itself, handed itself to
 * the next attempt because the store refused, or died mid-answer; the attempt that answers returns the
 * sum, and a store failure after the answer stores the kept answer instead of paying for a second one.
 * The workflow's side (the result counted, the give-up read) runs in the e2e tests.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDailyBudgetActivities } from '../../activities/daily-budget-activities';
import { createModelStepActivity } from '../../activities/model-step-activity';
import type { ModelStepInput, ModelStepResult } from '../../activities/types';
import { userText } from '../../core/messages';
import type { ModelCard } from '../../core/model-card';
import { activityInstance, callPricing, paidCallKeys } from '../../core/paid-calls';
import { FIRST_MESSAGE_KEY, storeKeys } from '../../core/store-keys';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { createTestDatabase, type TestDatabase } from './test-databases';

/** $10 per million output tokens, 1,000 at most: a call without usage counts $0.01. */
const CARD: ModelCard = {
  provider: 'openai-compatible',
  model: 'priced-model',
  advertisedContextTokens: 128_000,
  maxOutputTokens: 1_000,
  prices: { inputPerMTok: 0, outputPerMTok: 10, cacheReadPerMTok: 0, cacheWritePerMTok: 0 },
};
const RUN_ID = '11111111-2222-3333-4444-555555555555';
const ACTIVITY_ID = '9';
const INSTANCE = activityInstance(RUN_ID, ACTIVITY_ID);
/** The answer: 1,000 output tokens, $0.01. */
const ANSWER = {
  toolCalls: [{ name: 'bash', args: { command: 'echo hi' } }],
  usage: { prompt_tokens: 300, completion_tokens: 1_000 },
};

describe('billed attempts of a model step', () => {
  let db: TestDatabase;
  let client: SqlClient;
  let store: SqlSessionStore;
  let pg: Client;
  let server: OpenAITestServer;
  let sessions = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = createPgClient(db.url);
    await migrate(client);
    store = new SqlSessionStore(client);
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    server = await startOpenAITestServer();
  });
  afterAll(async () => {
    await server?.close();
    await pg?.end();
    await client?.close();
    await db?.drop();
  });

  /** A session with its first message, and the step input priced on CARD. */
  async function newStep(): Promise<ModelStepInput> {
    const sessionId = `paid-attempts-${++sessions}`;
    await store.createSession({
      id: sessionId,
      projectDir: '/ws',
      projectHash: 'h',
      objective: 'say hi',
      model: 'openai-compatible:priced-model',
      workflowId: `wf-${sessionId}`,
    });
    const first = await store.appendMessage(sessionId, FIRST_MESSAGE_KEY, userText('say hi'), {
      state: { set: { steps: 0 }, full: true },
    });
    return {
      sessionId,
      stepNumber: 1,
      execution: 1,
      model: 'openai-compatible:priced-model',
      baseUrl: server.url,
      upToSeq: first.seq,
      tools: ['bash'],
      state: { set: { steps: 1 } },
      streamIdleTimeoutS: 1,
      pricing: callPricing(CARD, 400),
    };
  }

  /** Runs one attempt; returns its outcome and the last heartbeat details it sent. */
  async function attempt(
    activity: ReturnType<typeof createModelStepActivity>,
    input: ModelStepInput,
    number: number,
    heartbeatDetails?: unknown,
  ): Promise<{ result?: ModelStepResult; error?: unknown; last: unknown }> {
    const env = new MockActivityEnvironment({
      attempt: number,
      activityId: ACTIVITY_ID,
      workflowExecution: { workflowId: 'wf', runId: RUN_ID },
      heartbeatDetails,
      currentAttemptScheduledTimestampMs: Date.now(),
      startToCloseTimeoutMs: 60_000,
    });
    let last: unknown;
    env.on('heartbeat', (details: unknown) => {
      last = details;
    });
    try {
      return { result: await env.run(activity.modelStep, input), last };
    } catch (error) {
      return { error, last };
    }
  }

  const rowsOf = (sessionId: string) => store.paidCallsUnder(sessionId, paidCallKeys.attempts(INSTANCE));
  const spentOf = async (sessionId: string) =>
    (await store.dailyBudgetView()).lines
      .filter((line) => line.sessionId === sessionId)
      .reduce((sum, line) => sum + line.spentUsd, 0);

  it('records a stream stalled after output at its reservation, and the answer returns it', async () => {
    const input = await newStep();
    const activity = createModelStepActivity({ store, env: {} });
    const before = server.requests.length;
    server.enqueue({ text: 'let me think about this at length', stallAfterText: true }, ANSWER);
    const stalled = await attempt(activity, input, 1);
    expect(stalled.error).toMatchObject({ type: 'ProviderStalled' });
    expect(await rowsOf(input.sessionId)).toEqual([
      {
        usage: { inputTokens: 400, outputTokens: 1_000, cacheReadTokens: 0, cacheWriteTokens: 0 },
        costUsd: 0.01,
        atReservation: true,
      },
    ]);
    const answered = await attempt(activity, input, 2, stalled.last);
    expect(answered.result?.billed).toMatchObject({ attempts: 1, atReservation: 1, costUsd: 0.01 });
    // The stalled attempt and the answer: $0.02 in the daily ledger, with no daily cap set.
    expect(await spentOf(input.sessionId)).toBeCloseTo(0.02, 9);
    expect(server.requests.length - before).toBe(2);
  });

  it('records an error mid-answer from the next attempt when the store refused its row, once', async () => {
    const input = await newStep();
    const activity = createModelStepActivity({ store, env: {} });
    await pg.query(`
      CREATE SEQUENCE paid_fail_once;
      CREATE FUNCTION paid_fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.kind = 'retry' AND nextval('paid_fail_once') = 1 THEN RAISE EXCEPTION 'injected: no ledger'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER paid_fail_once BEFORE INSERT ON daily_spend FOR EACH ROW EXECUTE FUNCTION paid_fail_once();`);
    try {
      server.enqueue(
        { text: 'half an answer', streamError: { message: 'The server had an error', type: 'server_error' } },
        ANSWER,
      );
      const broken = await attempt(activity, input, 1);
      expect(broken.error).toMatchObject({ type: 'ProviderUnavailable' });
      expect(await rowsOf(input.sessionId)).toEqual([]);
      expect(broken.last).toMatchObject({
        attempt: 1,
        answering: true,
        unrecorded: [{ attempt: 1, usage: null }],
      });
      const answered = await attempt(activity, input, 2, broken.last);
      expect(answered.result?.billed).toMatchObject({ attempts: 1, atReservation: 1, costUsd: 0.01 });
      expect(await rowsOf(input.sessionId)).toHaveLength(1);
    } finally {
      await pg.query(
        'DROP TRIGGER paid_fail_once ON daily_spend; DROP FUNCTION paid_fail_once; DROP SEQUENCE paid_fail_once',
      );
    }
  });

  it('records an attempt whose worker died mid-answer from its last heartbeat, once', async () => {
    const input = await newStep();
    const activity = createModelStepActivity({ store, env: {} });
    server.enqueue(ANSWER);
    const died = {
      step: 1,
      received: 12,
      unreachableSinceMs: null,
      attempt: 1,
      answering: true,
      unrecorded: [],
    };
    const answered = await attempt(activity, input, 2, died);
    expect(answered.result?.billed).toMatchObject({ attempts: 1, atReservation: 1 });
    // The activity gives up at a later attempt: the workflow's read writes what the last heartbeat
    // carried and adds up every billed attempt, each once.
    const ledger = createDailyBudgetActivities(store);
    const read = () =>
      ledger.billedAttempts({
        sessionId: input.sessionId,
        model: input.model,
        instance: INSTANCE,
        kind: 'step',
        pricing: input.pricing,
        lastHeartbeat: { ...died, attempt: 3 },
      });
    expect(await read()).toMatchObject({ attempts: 2, atReservation: 2, costUsd: 0.02 });
    expect(await read()).toMatchObject({ attempts: 2 });
  });

  it('stores a kept answer after a store failure: the provider is asked and paid once', async () => {
    const input = await newStep();
    const activity = createModelStepActivity({ store, env: {} });
    const before = server.requests.length;
    await pg.query(`
      CREATE SEQUENCE answer_fail_once;
      CREATE FUNCTION answer_fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.role = 'assistant' AND nextval('answer_fail_once') = 1 THEN RAISE EXCEPTION 'injected: disk full'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER answer_fail_once BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION answer_fail_once();`);
    try {
      server.enqueue(ANSWER);
      const failed = await attempt(activity, input, 1);
      expect(failed.error).toMatchObject({ type: 'StoreUnavailable' });
      // Billed and not stored: recorded at its reported usage for now.
      expect(await rowsOf(input.sessionId)).toMatchObject([{ costUsd: 0.01, atReservation: false }]);
      const stored = await attempt(activity, input, 2, failed.last);
      expect(stored.result?.toolCalls.map((call) => call.summary)).toEqual(['bash: echo hi']);
      // Stored from the kept answer: one request, and its cost counted once, as the answer.
      expect(server.requests.length - before).toBe(1);
      expect(stored.result?.billed).toBeUndefined();
      expect(await rowsOf(input.sessionId)).toEqual([]);
      expect(await spentOf(input.sessionId)).toBeCloseTo(0.01, 9);
      const message = await store.getMessageByKey(input.sessionId, storeKeys.assistant(1, 1));
      expect(message?.meta?.attemptKey).toBe(paidCallKeys.attempt(INSTANCE, 1));
    } finally {
      await pg.query(
        'DROP TRIGGER answer_fail_once ON messages; DROP FUNCTION answer_fail_once; DROP SEQUENCE answer_fail_once',
      );
    }
  });
});
