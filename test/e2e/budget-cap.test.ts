/**
 * Issue 18, the money cap end to end over HTTP: a goal on an OpenAI-compatible server with a priced
 * user card (GOALRUN_HOME/cards) stops at its cap in budget_reached, makes no request while it waits,
 * goes on in the same workflow after `goalrun limits --max-cost-usd`, and completes. A provider that
 * reports more than the reservation assumed takes the goal over the cap by that one call, never more.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { PRICED_MODEL, writePricedModelCard } from '../support/priced-model';

/** A turn reporting `output` output tokens: $0.01 per 1,000. */
const turn = (command: string, output: number) => ({
  toolCalls: [{ name: 'bash', args: { command } }],
  usage: { prompt_tokens: 400, completion_tokens: output },
});

describe('a goal with a money cap', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('waits at the cap without calling the model, and goes on in the same workflow after a raise', async () => {
    const t = goalTestEnv('budget-cap', { OPENAI_API_KEY: 'sk-test' });
    writePricedModelCard(t.home);
    const before = server.requests.length;
    server.enqueue(
      turn('echo one', 1_000),
      // The provider reports 2.5 times the card's output ceiling: the one call the cap can be overshot by.
      turn('echo two', 2_500),
      turn('echo three', 1_000),
      {
        toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done within the budget' } }],
        usage: { prompt_tokens: 400, completion_tokens: 1_000 },
      },
    );
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(
        t,
        server,
        'echo three things',
        ['--max-cost-usd', '0.025'],
        PRICED_MODEL,
      );

      // Step 1 ($0.01) and step 2 ($0.025, reported over the reservation) ran; step 3 would reserve
      // $0.01 more on $0.035 spent, over $0.025: the goal waits.
      const atCap = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(atCap.code, atCap.stderr).toBe(4);
      const waiting = JSON.parse(atCap.stdout);
      expect(waiting).toMatchObject({ status: 'budget_reached', steps: 2 });
      expect(waiting.reason).toContain('budget reached: $0.0350 spent of $0.0250');
      expect(waiting.reason).toContain(`goalrun limits ${sessionId} --max-cost-usd N`);
      expect(waiting.budget).toMatchObject({ capUsd: 0.025, capTokens: null });
      expect(waiting.budget.spentUsd).toBeCloseTo(0.035, 9);
      // The overshoot: one call, $0.01 over the cap (what the provider reported beyond the reservation).
      expect(waiting.budget.spentUsd - 0.025).toBeCloseTo(0.01, 9);
      expect(server.requests.length - before).toBe(2);

      // No request while it waits: the status stays, the server's count does not move.
      const waitedFrom = Date.now();
      while (Date.now() - waitedFrom < 5_000) {
        const shown = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
        expect(shown.status).toBe('budget_reached');
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(server.requests.length - before).toBe(2);
      // The end message of a follow says how to raise the cap, with a value that lets it go on.
      const told = await runCli(['watch', sessionId], t.env, 60_000);
      expect(told.code, told.stderr).toBe(4);
      expect(told.stdout + told.stderr).toContain(
        `to go on, raise the money cap: goalrun limits ${sessionId} --max-cost-usd 0.05 while it waits`,
      );
      const text = await runCli(['status', sessionId], t.env);
      // Nothing is in flight while it waits: nothing is reserved.
      expect(text.stdout).toMatch(/budget\s+\$0\.0350 spent, \$0\.0000 reserved, cap \$0\.0250/);
      // The user's card gives the model its prices: no "no model card" note.
      expect(text.stdout).not.toContain('no model card');
      const listed = await runCli(['list'], t.env);
      expect(listed.stdout).toContain('[$0.0350 of $0.0250]');

      const raised = await runCli(['limits', sessionId, '--max-cost-usd', '0.08'], t.env);
      expect(raised.code, raised.stderr).toBe(0);
      expect(raised.stdout).toContain('max_cost_usd $0.0250 → $0.0800');

      const done = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(done.code, done.stderr).toBe(0);
      const final = JSON.parse(done.stdout);
      expect(final).toMatchObject({ status: 'completed', steps: 4, finishSummary: 'done within the budget' });
      expect(final.costUsd).toBeCloseTo(0.055, 9);
      expect(server.requests.length - before).toBe(4);
      // The same workflow went on from the step it stopped at: step 3 carries steps 1 and 2.
      const third = JSON.stringify(server.requests[before + 2].body);
      expect(third).toContain('echo two');

      const stream = await runCli(
        ['watch', sessionId, '--output-format', 'stream-json', '--from-start'],
        t.env,
      );
      const events = stream.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      const budget = events.filter((event) => event.type === 'budget');
      expect(budget.map((event) => event.at)).toEqual(['cap', 'raised']);
      expect(budget[0]).toMatchObject({ cap: 'cost', cap_usd: 0.025, reserved_usd: 0.01 });
      expect(budget[1]).toMatchObject({ cap: null, cap_usd: 0.08 });
      expect(events.at(-1)).toMatchObject({ type: 'result', status: 'completed' });
      expect(events.at(-1).total_cost_usd).toBeCloseTo(0.055, 9);

      // One session, one execution: nothing was resumed or started again.
      const store = await testStore(t.databaseUrl);
      const kinds = (await store.listEvents(sessionId)).map((event) => event.kind);
      await store.close();
      expect(kinds.filter((kind) => kind === 'session-opened')).toHaveLength(1);
      expect(kinds).not.toContain('session-resumed');
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });

  it('is refused at start for a model whose card has no prices, naming where a card goes', async () => {
    const t = goalTestEnv('budget-unpriced', { OPENAI_API_KEY: 'sk-test' });
    const result = await runCli(
      [
        'start',
        'anything',
        '--workspace',
        t.workspace,
        '--model',
        'openai-compatible:unpriced',
        '--base-url',
        server.url,
        '--max-cost-usd',
        '1',
      ],
      t.env,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(path.join(t.home, 'cards', 'openai-compatible', 'unpriced.json'));
    expect(result.stderr).toContain('has no model card');
    const bad = await runCli(
      ['start', 'anything', '--workspace', t.workspace, '--max-cost-usd', 'lots'],
      t.env,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-cost-usd must be a positive amount of US dollars');
  });
});
