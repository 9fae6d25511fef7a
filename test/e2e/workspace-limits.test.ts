/**
 * Issue 24 §3: the limits are the user's. A model that writes `.goalrun/config.json` (a higher money
 * cap, more steps, the breaker off) and a card with near-zero prices in `.goalrun/cards` lifts nothing:
 * its goal stops at the user's global cap, and so does the NEXT goal started in that directory, whose
 * `run` says which project settings it applied and which it ignored. `/model` (steer) and `goalrun
 * model` to a model without prices, on a goal with a money cap, are refused with the reason, in the
 * CLI and, for a request that bypasses it (a signal), by the goal itself; so is a money cap added with
 * `goalrun limits` to a goal whose model has no prices.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { steerSignal } from '../../workflows/definitions';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { gate, goalArgs, requestsOf, startGoal, statusOf } from '../support/goal-steps';
import { type OpenAITestServer, promptText, startOpenAITestServer } from '../support/openai-test-server';
import { PRICED_MODEL, writePricedModelCard } from '../support/priced-model';

/** Every answer reports 1,000 output tokens: $0.01 on the priced card, the whole reservation. */
const USAGE = { prompt_tokens: 100, completion_tokens: 1_000 };
/** The user's global cap: three calls. */
const GLOBAL_CAP = 0.03;

const PLANTED_CONFIG = JSON.stringify({
  max_cost_usd: 100,
  max_steps: 5_000,
  max_tokens: 1_000_000_000,
  breaker: { repeat_limit: 0, idle_turns: 0 },
  // Lowered: a project may do that.
  max_minutes: 30,
});
const PLANTED_CARD = JSON.stringify({
  provider: 'openai-compatible',
  model: 'priced-model',
  advertisedContextTokens: 128_000,
  maxOutputTokens: 1_000,
  prices: { inputPerMTok: 0.0001, outputPerMTok: 0.0001, cacheReadPerMTok: 0, cacheWritePerMTok: 0 },
});

/**
 * A goal whose first model call waits until `held` opens (one bash call), then finishes: the test acts
 * on it while it is surely running.
 */
function holdFirstCall(server: OpenAITestServer, word: string) {
  const objective = `hold for ${word} ${randomUUID().slice(0, 8)}`;
  const held = gate();
  let calls = 0;
  server.setFallback(async (body) => {
    if (!promptText(body).includes(objective)) return { text: 'not mine' };
    calls += 1;
    if (calls === 1) {
      await held.opened;
      return { toolCalls: [{ name: 'bash', args: { command: 'echo one' } }], usage: USAGE };
    }
    return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }], usage: USAGE };
  });
  return { objective, held };
}

describe('a workspace file never lifts the user limits', () => {
  let server: OpenAITestServer;
  let client: Client;
  beforeAll(async () => {
    server = await startOpenAITestServer();
    client = new Client({
      connection: await Connection.connect({ address: goalTestEnv('limits-probe').temporalAddress }),
    });
  });
  afterAll(async () => {
    await server?.close();
    await client?.connection.close();
  });

  it('holds the global cap against a planted config and card, in that goal and the next one', async () => {
    const t = goalTestEnv('ws-limits');
    writePricedModelCard(t.home);
    fs.writeFileSync(path.join(t.home, 'config.json'), JSON.stringify({ max_cost_usd: GLOBAL_CAP }));

    const first = `plant a config ${randomUUID().slice(0, 8)}`;
    const next = `the next goal ${randomUUID().slice(0, 8)}`;
    // The first goal plants the files, then works on; the next one answers with ever new commands (no
    // breaker trip). Either would finish after ten calls if nothing stopped it.
    const planting = [
      { name: 'file-write', args: { path: '.goalrun/config.json', content: PLANTED_CONFIG } },
      {
        name: 'file-write',
        args: { path: '.goalrun/cards/openai-compatible/priced-model.json', content: PLANTED_CARD },
      },
    ];
    const calls = new Map<string, number>();
    server.setFallback((body) => {
      const goal = [first, next].find((objective) => promptText(body).includes(objective));
      if (!goal) return { text: 'not mine' };
      const n = (calls.get(goal) ?? 0) + 1;
      calls.set(goal, n);
      if (n > 10)
        return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'ran free' } }] };
      const call =
        goal === first && n <= planting.length
          ? planting[n - 1]
          : { name: 'bash', args: { command: `echo call ${n}` } };
      return { toolCalls: [call], usage: USAGE };
    });
    // One worker serves both goals: `run --no-worker` prints only the goal's JSON on stdout.
    const worker = spawnCli(['worker'], t.env);
    try {
      const planted = await runCli(
        goalArgs('run', first, t, server, ['--json', '--no-worker'], PRICED_MODEL),
        t.env,
        180_000,
      );
      expect(planted.code, planted.stderr).toBe(4);
      const firstStatus = JSON.parse(planted.stdout);
      expect(firstStatus).toMatchObject({ status: 'budget_reached', steps: 3 });
      expect(firstStatus.budget.capUsd).toBe(GLOBAL_CAP);
      expect(requestsOf(server, first)).toHaveLength(3);
      expect(fs.existsSync(path.join(t.workspace, '.goalrun', 'config.json'))).toBe(true);
      expect(
        fs.existsSync(path.join(t.workspace, '.goalrun', 'cards', 'openai-compatible', 'priced-model.json')),
      ).toBe(true);
      // The test is done with it: its wait for a raise must not hold the worker.
      await runCli(['cancel', firstStatus.sessionId], t.env);

      // The next goal in that directory.
      const second = await runCli(
        goalArgs('run', next, t, server, ['--json', '--no-worker'], PRICED_MODEL),
        t.env,
        180_000,
      );
      expect(second.code, second.stderr).toBe(4);
      const status = JSON.parse(second.stdout);
      expect(status.status).toBe('budget_reached');
      expect(status.budget.capUsd).toBe(GLOBAL_CAP);
      expect(status.budget.spentUsd).toBeCloseTo(GLOBAL_CAP, 9);
      expect(requestsOf(server, next)).toHaveLength(3);
      // A lowering is applied; the raises and the card are not, and `run` says so.
      expect(status.limits.maxMinutes).toBe(30);
      expect(status.limits.maxSteps).toBe(500);
      expect(second.stderr).toMatch(/project config .*\.goalrun\/config\.json: applied max_minutes 30/);
      expect(second.stderr).toMatch(
        /ignored .*max_cost_usd 100 \(above your 0\.03: a project may only lower a limit\)/,
      );
      expect(second.stderr).toMatch(/ignored .*breaker\.repeat_limit 0/);
      expect(second.stderr).toMatch(
        /\.goalrun\/cards: not read: model cards come from the package and \$GOALRUN_HOME\/cards only/,
      );
      await runCli(['cancel', status.sessionId], t.env);
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  }, 400_000);

  it('refuses /model and goalrun model to a model without prices under a money cap, and says why', async () => {
    const t = goalTestEnv('ws-model');
    writePricedModelCard(t.home);
    const { objective, held } = holdFirstCall(server, 'model');
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, objective, ['--max-cost-usd', '1'], PRICED_MODEL);
      await waitFor('the first model call', () => requestsOf(server, objective).length > 0);

      const verb = await runCli(['model', sessionId, 'openai-compatible:unpriced'], t.env);
      expect(verb.code, verb.stdout + verb.stderr).toBe(2);
      expect(verb.stderr).toMatch(
        /openai-compatible:unpriced has no model card with prices.*money cap \(\$1\.0000\)/,
      );
      const steered = await runCli(['steer', sessionId, '/model openai-compatible:unpriced'], t.env);
      expect(steered.code).toBe(2);
      expect(steered.stderr).toMatch(/has no model card with prices/);

      // A request that never passed the CLI (a signal): the goal refuses it itself.
      await client.workflow
        .getHandle(`goalrun-${sessionId}`)
        .signal(steerSignal, { id: randomUUID(), text: '/model openai-compatible:unpriced', from: 'tester' });
      held.open();
      const done = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(done.code, done.stderr).toBe(0);
      const final = await statusOf(t, sessionId);
      expect(final.model).toBe(PRICED_MODEL);
      const recent = (final.recent as Array<{ text: string }>).map((action) => action.text).join('\n');
      expect(recent).toMatch(
        /\/model from tester failed: .*openai-compatible:unpriced has no model card with prices/,
      );
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);

  it('refuses a money cap added with goalrun limits to a goal whose model has no prices, and says why', async () => {
    const t = goalTestEnv('ws-limits-cap');
    const { objective, held } = holdFirstCall(server, 'limits');
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, objective, [], 'openai-compatible:unpriced');
      await waitFor('the first model call', () => requestsOf(server, objective).length > 0);

      const capped = await runCli(['limits', sessionId, '--max-cost-usd', '2'], t.env);
      expect(capped.code, capped.stdout + capped.stderr).toBe(2);
      expect(capped.stderr).toMatch(
        /\/limits .*openai-compatible:unpriced has no model card with prices.*money cap \(\$2\.0000\)/,
      );
      // Limits that count no money are still the user's to change.
      const steps = await runCli(['limits', sessionId, '--max-steps', '40'], t.env);
      expect(steps.code, steps.stdout + steps.stderr).toBe(0);

      held.open();
      const done = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(done.code, done.stderr).toBe(0);
      const final = await statusOf(t, sessionId);
      expect(final.limits.maxSteps).toBe(40);
      expect(final.limits.maxCostUsd ?? null).toBeNull();
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);
});
