/**
 * Issue 18 item 4 end to end: the store-wide daily budget over HTTP with a priced user card, two
 * workers and three goals. Every call reserves $0.01 and costs $0.01; at a $0.03 daily cap the three
 * first calls fit and every goal then waits in budget_reached (reason: daily budget) with no request
 * made; `goalrun budget set` higher lets them go on (the waiting goals re-check every minute) and
 * complete; `goalrun budget` shows the spend per goal and model. A call whose worst case alone is over
 * the cap ends its goal as blocked at once (issue 24 item 5). The test has a database of its own:
 * a daily budget is store-wide and would hold up other test files' goals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../store/test-databases';
import { killAndWait, runCli, spawnCli } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type OpenAITestServer, requestStep, startOpenAITestServer } from '../support/openai-test-server';
import { PRICED_MODEL, writePricedModelCard } from '../support/priced-model';

const GOALS = 3;
/** Longer than the goals' one-minute re-check after a raise. */
const WAIT_MS = 200_000;

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, what: string): Promise<T> {
  const from = Date.now();
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() - from > WAIT_MS)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

describe('the daily budget over many goals', () => {
  let server: OpenAITestServer;
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    // The first calls are answered only once every goal has made its own: each was reserved before
    // its request, so the cap is taken by the three first calls whatever the workers' timing, and no
    // goal's second call can slip in ahead of another goal's first.
    let firstCalls = 0;
    let allFirstCallsIn: () => void = () => {};
    const allFirstCalls = new Promise<void>((resolve) => {
      allFirstCallsIn = resolve;
    });
    // Step 1 runs a command, step 2 finishes; each reports 1,000 output tokens ($0.01).
    server = await startOpenAITestServer({
      fallback: async (body) => {
        if (requestStep(body) !== 1) {
          return {
            toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }],
            usage: { prompt_tokens: 300, completion_tokens: 1_000 },
          };
        }
        if (++firstCalls >= GOALS) allFirstCallsIn();
        await allFirstCalls;
        return {
          toolCalls: [{ name: 'bash', args: { command: 'echo working' } }],
          usage: { prompt_tokens: 300, completion_tokens: 1_000 },
        };
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('holds every goal at the daily cap and lets them finish after a raise', {
    timeout: 600_000,
  }, async () => {
    const t = goalTestEnv('daily-budget', { OPENAI_API_KEY: 'sk-test', DATABASE_URL: database.url });
    writePricedModelCard(t.home);
    const set = await runCli(['budget', 'set', '--daily-usd', '0.03'], t.env);
    expect(set.code, set.stderr).toBe(0);
    // Every goal is started before the workers, so that their first calls race for the cap together.
    let workers: ReturnType<typeof spawnCli>[] = [];
    try {
      const ids: string[] = [];
      for (let index = 0; index < GOALS; index++) {
        ids.push((await startGoal(t, server, `goal ${index}`, [], PRICED_MODEL)).sessionId);
      }
      workers = [spawnCli(['worker'], t.env), spawnCli(['worker'], t.env)];
      const status = async (id: string) => JSON.parse((await runCli(['status', id, '--json'], t.env)).stdout);
      const waiting = await until(
        () => Promise.all(ids.map(status)),
        (all) => all.every((goal) => goal.status === 'budget_reached'),
        'every goal at the daily cap',
      );
      for (const goal of waiting) expect(goal.reason).toContain('daily budget reached');
      expect(server.requests).toHaveLength(GOALS);

      const shown = JSON.parse((await runCli(['budget', '--json'], t.env)).stdout);
      expect(shown.capUsd).toBe(0.03);
      expect(shown.spentUsd).toBeCloseTo(0.03, 9);
      expect(shown.reservedUsd).toBe(0);
      expect(shown.lines.map((line: { sessionId: string }) => line.sessionId).sort()).toEqual(
        [...ids].sort(),
      );
      for (const line of shown.lines) {
        expect(line.model).toContain('priced-model');
        expect(line.spentUsd).toBeCloseTo(0.01, 9);
      }
      // No request while they wait.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(server.requests).toHaveLength(GOALS);

      const raised = await runCli(['budget', 'set', '--daily-usd', '1'], t.env);
      expect(raised.code, raised.stderr).toBe(0);
      const done = await until(
        () => Promise.all(ids.map(status)),
        (all) => all.every((goal) => goal.status === 'completed'),
        'every goal completed after the raise',
      );
      expect(done.every((goal) => goal.finishSummary === 'done')).toBe(true);
      expect(server.requests).toHaveLength(2 * GOALS);
      const text = await runCli(['budget'], t.env);
      expect(text.stdout).toContain('cap $1.0000, $0.0600 spent, $0.0000 reserved');
      for (const id of ids)
        expect(text.stdout).toMatch(new RegExp(`${id}\\s+\\S*priced-model\\s+\\$0\\.0200 spent`));
    } finally {
      await Promise.all(workers.map((worker) => killAndWait(worker, 'SIGTERM')));
    }
  });

  it('refuses at once a call that can never fit under the daily cap: the goal ends blocked, no request made', {
    timeout: 300_000,
  }, async () => {
    const t = goalTestEnv('daily-impossible', { OPENAI_API_KEY: 'sk-test', DATABASE_URL: database.url });
    writePricedModelCard(t.home);
    // Every call of the priced model reserves $0.01: under a $0.005 cap none can ever run.
    const set = await runCli(['budget', 'set', '--daily-usd', '0.005'], t.env);
    expect(set.code, set.stderr).toBe(0);
    const before = server.requests.length;
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, 'a goal too dear for the day', [], PRICED_MODEL);
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(watched.code, watched.stderr).toBe(1);
      const final = JSON.parse(watched.stdout);
      expect(final.status).toBe('blocked');
      expect(final.reason).toMatch(/^a single call needs \$0\.0100, the daily budget is \$0\.0050; /);
      expect(final.reason).toContain('goalrun budget set --daily-usd N');
      expect(final.steps).toBe(0);
      expect(server.requests.length).toBe(before);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
