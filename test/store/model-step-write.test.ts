/**
 * Issue 9 item 7, for model steps: the assistant message, the state the step started from, its usage
 * event and its ledger row commit in one transaction. Real PostgreSQL fails the write part-way (a
 * trigger raises once, after some of the rows are written inside the transaction); nothing of the step
 * is left behind, and the activity's retry writes each row exactly once, from the answer the first
 * attempt kept: the model is asked once (issue 24 item 4).
 */
import fs from 'node:fs';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModelStepActivity } from '../../activities/model-step-activity';
import { createModelClient } from '../../activities/providers';
import type { ModelStepInput, ModelStepResult } from '../../activities/types';
import { userText } from '../../core/messages';
import { FIRST_MESSAGE_KEY, storeKeys } from '../../core/store-keys';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { createTempDir, createTestDatabase, type TestDatabase } from './test-databases';

/** The rows one step writes, and where the injected failure strikes. */
const STEP = 1;
const EXECUTION = 2;
const ASSISTANT_KEY = storeKeys.assistant(EXECUTION, STEP);
const USAGE_KEY = storeKeys.usageEvent(EXECUTION, STEP);

/** Fails the first matching write of a transaction (a sequence is not rolled back, so it fails only once). */
const FAIL_ONCE_FUNCTION = `
CREATE FUNCTION goalrun_test_fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF nextval(TG_ARGV[0]::regclass) = 1 THEN
    RAISE EXCEPTION 'injected failure: the write stopped part-way';
  END IF;
  RETURN NEW;
END $$;`;

/** Where in the step's transaction the failure strikes. */
const FAILURE_POINTS = [
  {
    name: 'at the usage event (after the message and the state)',
    table: 'events',
    sql: (sequence: string) => `
CREATE SEQUENCE ${sequence};
CREATE TRIGGER ${sequence} BEFORE INSERT ON events FOR EACH ROW
  WHEN (NEW.key = '${USAGE_KEY}') EXECUTE FUNCTION goalrun_test_fail_once('${sequence}');`,
  },
  {
    name: 'at the state write (after the message)',
    table: 'sessions',
    sql: (sequence: string) => `
CREATE SEQUENCE ${sequence};
CREATE TRIGGER ${sequence} BEFORE UPDATE ON sessions FOR EACH ROW
  WHEN (NEW.goal_state IS DISTINCT FROM OLD.goal_state) EXECUTE FUNCTION goalrun_test_fail_once('${sequence}');`,
  },
  {
    name: "at the answer's ledger row (after the message, the state and the event)",
    table: 'daily_spend',
    sql: (sequence: string) => `
CREATE SEQUENCE ${sequence};
CREATE TRIGGER ${sequence} BEFORE INSERT ON daily_spend FOR EACH ROW
  WHEN (NEW.kind = 'answer') EXECUTE FUNCTION goalrun_test_fail_once('${sequence}');`,
  },
];

describe('a model step stores its answer in one transaction', () => {
  let db: TestDatabase;
  let client: SqlClient;
  let store: SqlSessionStore;
  let pg: Client;
  const temp = createTempDir('goalrun-model-step-write');

  beforeAll(async () => {
    db = await createTestDatabase();
    client = createPgClient(db.url);
    await migrate(client);
    store = new SqlSessionStore(client);
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    await pg.query(FAIL_ONCE_FUNCTION);
  });
  afterAll(async () => {
    await pg?.end();
    await client?.close();
    await db?.drop();
    temp.remove();
  });

  /** The rows of the step: its message, its usage event, and the saved state's step counter. */
  async function stepRows(sessionId: string) {
    const messages = await pg.query('SELECT key, content FROM messages WHERE session_id = $1 AND key = $2', [
      sessionId,
      ASSISTANT_KEY,
    ]);
    const usage = await pg.query('SELECT key FROM events WHERE session_id = $1 AND key = $2', [
      sessionId,
      USAGE_KEY,
    ]);
    const session = await pg.query('SELECT goal_state FROM sessions WHERE id = $1', [sessionId]);
    const ledger = await pg.query("SELECT key FROM daily_spend WHERE session_id = $1 AND kind = 'answer'", [
      sessionId,
    ]);
    return {
      messages: messages.rows,
      usageEvents: usage.rows.length,
      answerRows: ledger.rows.length,
      steps: (session.rows[0].goal_state as { steps?: number } | null)?.steps,
    };
  }

  for (const [index, point] of FAILURE_POINTS.entries()) {
    it(`leaves nothing half-written when it fails ${point.name}, and the retry writes once`, async () => {
      const sessionId = `model-step-write-${index}`;
      await store.createSession({
        id: sessionId,
        projectDir: temp.dir,
        projectHash: 'h',
        objective: 'say hi',
        model: 'scripted:x',
        workflowId: `wf-${sessionId}`,
      });
      const first = await store.appendMessage(sessionId, FIRST_MESSAGE_KEY, userText('say hi'), {
        state: { set: { steps: 0 }, full: true },
      });
      const script = path.join(temp.dir, `script-${index}.json`);
      fs.writeFileSync(
        script,
        JSON.stringify({
          turns: [
            {
              text: 'running it',
              toolCalls: [{ name: 'bash', args: { command: 'echo hi' } }],
              usage: { input: 100, output: 10 },
            },
          ],
        }),
      );
      let modelCalls = 0;
      const activity = createModelStepActivity({
        store,
        env: {},
        // The real scripted provider, counted.
        modelClient: (spec, baseUrl) => {
          const real = createModelClient(spec, { baseUrl, env: {} });
          return {
            spec,
            stream: (request) => {
              modelCalls += 1;
              return real.stream(request);
            },
          };
        },
      });
      const input: ModelStepInput = {
        sessionId,
        stepNumber: STEP,
        execution: EXECUTION,
        model: `scripted:${script}`,
        upToSeq: first.seq,
        tools: ['bash'],
        state: { set: { steps: STEP } },
      };
      const sequence = `goalrun_test_fail_${index}`;
      await pg.query(point.sql(sequence));
      try {
        // The failed write fails the attempt with a retryable failure, so Temporal runs the step again.
        await expect(
          new MockActivityEnvironment({ attempt: 1 }).run(activity.modelStep, input),
        ).rejects.toMatchObject({
          // The store's failure, not the provider's: it must never count toward provider_unreachable_minutes.
          type: 'StoreUnavailable',
          message: expect.stringMatching(/^session store: .*injected failure/),
          nonRetryable: false,
        });
        // Nothing of the step survived the failure: no message, no usage event, the state as before.
        expect(await stepRows(sessionId)).toEqual({ messages: [], usageEvents: 0, answerRows: 0, steps: 0 });
        expect(modelCalls).toBe(1);

        const retried: ModelStepResult = await new MockActivityEnvironment({ attempt: 2 }).run(
          activity.modelStep,
          input,
        );
        const after = await stepRows(sessionId);
        expect(after.messages).toHaveLength(1);
        expect(after.usageEvents).toBe(1);
        expect(after.answerRows).toBe(1);
        expect(after.steps).toBe(STEP);
        expect(retried.entry.seq).toBeGreaterThan(first.seq);
        expect(retried.toolCalls.map((call) => call.summary)).toEqual(['bash: echo hi']);
        expect(retried.retried).toMatchObject({
          attempts: 2,
          lastError: expect.stringMatching(/injected failure/),
        });
        // The answer the first attempt was paid for was kept and stored: the model is not asked twice.
        expect(modelCalls).toBe(1);

        // A third attempt (its result was lost) finds the stored answer: no model call, no second row.
        const again: ModelStepResult = await new MockActivityEnvironment({ attempt: 3 }).run(
          activity.modelStep,
          input,
        );
        expect(again.entry.seq).toBe(retried.entry.seq);
        expect(modelCalls).toBe(1);
        expect(await stepRows(sessionId)).toEqual(after);
      } finally {
        await pg.query(`DROP TRIGGER ${sequence} ON ${point.table}`);
      }
    });
  }
});
