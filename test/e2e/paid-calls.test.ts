/**
 * Issue 24 item 4 end to end, over HTTP with a priced user card: every call the provider bills
 * counts, retries included. A stream that stalls after output is counted at its reservation against
 * the goal's money cap and shown in `stats` as a retry; a server error mid-answer is counted too; a
 * store failure after the answer stores the answer the worker kept instead of asking the provider
 * again. `goalrun budget` shows all of it with no daily cap set (issue 26 item 5). Every call of the
 * priced model reserves $0.01 (1,000 output tokens at $10 per million) and the answers report 1,000.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../store/migrations';
import { createPgClient } from '../../store/sql';
import { createTestDatabase, type TestDatabase } from '../store/test-databases';
import { expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { startGoal, statusOf } from '../support/goal-steps';
import {
  type OpenAITestServer,
  promptText,
  startOpenAITestServer,
  type TestResponse,
} from '../support/openai-test-server';
import { PRICED_MODEL, writePricedModelCard } from '../support/priced-model';

/** A turn that runs `command` and reports 1,000 output tokens ($0.01). */
const turn = (command: string) => ({
  toolCalls: [{ name: 'bash', args: { command } }],
  usage: { prompt_tokens: 400, completion_tokens: 1_000 },
});
const finish = {
  toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }],
  usage: { prompt_tokens: 400, completion_tokens: 1_000 },
};
/** Seconds of silence after which an attempt is given up as stalled. */
const IDLE_S = 3;

describe('paid calls without a used answer', () => {
  let server: OpenAITestServer;
  /** Each goal's scripted answers, by its objective (the tests' goals never share a server queue). */
  const scripts = new Map<string, TestResponse[]>();
  beforeAll(async () => {
    server = await startOpenAITestServer({
      fallback: (body) => {
        for (const [objective, answers] of scripts) {
          if (promptText(body).includes(objective)) return answers.shift() ?? finish;
        }
        return { status: 400, body: { error: { message: 'no script for this goal' } } };
      },
    });
  });
  afterAll(async () => server?.close());

  const requestsOf = (objective: string) =>
    server.requests.filter((request) => promptText(request.body).includes(objective)).length;

  it('counts a stream stalled after output against the cap, and stats shows it as a retry', async () => {
    const t = goalTestEnv('paid-stall', { OPENAI_API_KEY: 'sk-test' });
    writePricedModelCard(t.home);
    const objective = 'paid-stall: echo once';
    scripts.set(objective, [
      { text: 'Let me look at this first, at some length.', stallAfterText: true },
      turn('echo one'),
      // Only reached when the stalled attempt is not counted.
      turn('echo two'),
      finish,
    ]);
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(
        t,
        server,
        objective,
        ['--max-cost-usd', '0.025', '--stream-idle-timeout', String(IDLE_S)],
        PRICED_MODEL,
      );
      // The stalled attempt ($0.01 at its reservation) and step 1 ($0.01) leave $0.005: the next
      // call's $0.01 reservation does not fit, so the goal waits after one step.
      const waited = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
      expect(waited.code, waited.stderr).toBe(4);
      const status = JSON.parse(waited.stdout);
      expect(status).toMatchObject({ status: 'budget_reached', steps: 1 });
      expect(status.budget.spentUsd).toBeCloseTo(0.02, 9);
      expect(status.reason).toContain('budget reached: $0.0200 spent of $0.0250');
      expect(requestsOf(objective)).toBe(2);

      const stats = await runCli(['stats', sessionId], t.env);
      expect(stats.code, stats.stderr).toBe(0);
      expect(stats.stdout).toContain('cost:             $0.0200');
      expect(stats.stdout).toContain(
        'retries:          1 attempt, $0.0100 (1 at its reservation: no usage reported)',
      );
      expect(stats.stdout).toMatch(/ {4}of which retries\s+1\s+\d+\s+1000\s+0\s+0\s+\$0\.0100/);
      const json = expectJson(await runCli(['stats', sessionId, '--json'], t.env));
      expect(json.usage.requests).toBe(2);
      expect(json.breakdown[PRICED_MODEL].retries).toMatchObject({ requests: 1, atReservation: 1 });

      // No daily cap is set, and `goalrun budget` shows the spend all the same, the retry apart.
      const budget = expectJson(await runCli(['budget', '--json'], t.env));
      const line = budget.lines.find((entry: { sessionId: string }) => entry.sessionId === sessionId);
      expect(line).toMatchObject({ model: PRICED_MODEL, calls: 2, retries: 1, reservedUsd: 0 });
      expect(line.spentUsd).toBeCloseTo(0.02, 9);
      const text = await runCli(['budget'], t.env);
      expect(text.stdout).toMatch(
        new RegExp(
          `${sessionId}\\s+\\S*priced-model\\s+\\$0\\.0200 spent, \\$0\\.0000 reserved, 2 calls \\(1 billed without an answer\\)`,
        ),
      );
      await runCli(['cancel', sessionId, '--wait'], t.env);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);

  it('counts an attempt that broke with a server error mid-answer', async () => {
    const t = goalTestEnv('paid-5xx', { OPENAI_API_KEY: 'sk-test' });
    writePricedModelCard(t.home);
    const objective = 'paid-5xx: echo once';
    scripts.set(objective, [
      {
        text: 'Half of an answer',
        streamError: {
          message: 'The server had an error while processing your request',
          type: 'server_error',
        },
      },
      turn('echo one'),
      finish,
    ]);
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, objective, [], PRICED_MODEL);
      const done = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
      expect(done.code, done.stderr).toBe(0);
      const final = JSON.parse(done.stdout);
      expect(final).toMatchObject({ status: 'completed', steps: 2 });
      // Two answers and the broken attempt at its reservation.
      expect(final.costUsd).toBeCloseTo(0.03, 9);
      expect(requestsOf(objective)).toBe(3);
      const json = expectJson(await runCli(['stats', sessionId, '--json'], t.env));
      expect(json.breakdown[PRICED_MODEL].retries).toMatchObject({ requests: 1, atReservation: 1 });
      expect(json.breakdown[PRICED_MODEL].retries.costUsd).toBeCloseTo(0.01, 9);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);

  it('counts an attempt a pause stopped mid-answer, read from the ledger after the call ended', async () => {
    const t = goalTestEnv('paid-pause', { OPENAI_API_KEY: 'sk-test' });
    writePricedModelCard(t.home);
    const objective = 'paid-pause: echo once';
    // The first answer begins and then hangs (the idle timeout is long): only the pause ends it.
    scripts.set(objective, [{ text: 'Starting on it, one moment.', stallAfterText: true }, finish]);
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(
        t,
        server,
        objective,
        ['--stream-idle-timeout', '600'],
        PRICED_MODEL,
      );
      await waitFor('the first answer to begin', () => requestsOf(objective) === 1, 120_000, 200);
      expect((await runCli(['pause', sessionId], t.env)).code).toBe(0);
      await waitFor(
        'the goal to pause',
        async () => (await statusOf(t, sessionId)).status === 'paused',
        120_000,
        500,
      );
      const paused = await statusOf(t, sessionId);
      expect(paused.steps).toBe(0);
      // Billed though stopped: its reservation ($0.01) is spent, a retry in stats.
      expect(paused.costUsd).toBeCloseTo(0.01, 9);
      const json = expectJson(await runCli(['stats', sessionId, '--json'], t.env));
      expect(json.breakdown[PRICED_MODEL].retries).toMatchObject({ requests: 1, atReservation: 1 });
      expect((await runCli(['unpause', sessionId], t.env)).code).toBe(0);
      const done = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
      expect(done.code, done.stderr).toBe(0);
      expect(JSON.parse(done.stdout).costUsd).toBeCloseTo(0.02, 9);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);

  describe('with a store that fails the write of an answer', () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase();
      const client = createPgClient(database.url);
      await migrate(client);
      // The first answer that runs `echo kept` cannot be stored (once): a write error after the
      // provider was paid, as a full disk or a failed constraint would give.
      await client.exec(`
        CREATE SEQUENCE kept_answer_fails;
        CREATE FUNCTION kept_answer_fails() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.role = 'assistant' AND NEW.content::text LIKE '%echo kept%' AND nextval('kept_answer_fails') = 1 THEN
            RAISE EXCEPTION 'injected: could not extend file';
          END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER kept_answer_fails BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION kept_answer_fails();`);
      await client.close();
    });
    afterAll(async () => database?.drop());

    it('stores the answer it kept instead of asking the provider again', async () => {
      const t = goalTestEnv('paid-kept', { OPENAI_API_KEY: 'sk-test', DATABASE_URL: database.url });
      writePricedModelCard(t.home);
      const objective = 'paid-kept: echo kept';
      scripts.set(objective, [turn('echo kept'), finish, finish]);
      const worker = spawnCli(['worker'], t.env);
      try {
        const { sessionId } = await startGoal(t, server, objective, [], PRICED_MODEL);
        const done = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
        expect(done.code, done.stderr).toBe(0);
        // One request per step: the failed write did not send the first step's request again.
        expect(requestsOf(objective)).toBe(2);
        const final = JSON.parse(done.stdout);
        expect(final).toMatchObject({ status: 'completed', steps: 2 });
        expect(final.costUsd).toBeCloseTo(0.02, 9);
        const events = await runCli(
          ['watch', sessionId, '--from-start', '--output-format', 'stream-json'],
          t.env,
        );
        expect(events.stdout).toContain('echo kept');
        const budget = expectJson(await runCli(['budget', '--json'], t.env));
        const line = budget.lines.find((entry: { sessionId: string }) => entry.sessionId === sessionId);
        expect(line).toMatchObject({ calls: 2, retries: 0 });
        expect(line.spentUsd).toBeCloseTo(0.02, 9);
      } finally {
        await killAndWait(worker, 'SIGTERM');
      }
    }, 300_000);
  });
});
