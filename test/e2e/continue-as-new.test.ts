/**
 * Acceptance 8: continue-as-new, forced early through the dev server's dynamic config, keeps the
 * goal state intact (counters, iterations, usage) and the goal completes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, scriptedModel, spawnCli } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { fetchHistory } from '../support/history';
import { startTestTemporalServer, type TestTemporalServer } from '../support/temporal-server';

describe('continue-as-new', () => {
  let server: TestTemporalServer;
  beforeAll(async () => {
    server = await startTestTemporalServer({
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 40 },
    });
  });
  afterAll(async () => server?.stop());

  it('carries the whole goal state across runs', async () => {
    const t = goalTestEnv('can', { TEMPORAL_ADDRESS: server.address });
    const turns: unknown[] = [];
    for (let i = 0; i < 15; i++) {
      const usage = { input: 100 * (i + 1), output: 10 };
      if (i === 14) {
        turns.push({
          toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'made it' } }],
          usage,
        });
      } else if (i % 3 === 2) {
        turns.push({ text: `turn ${i} done`, usage });
      } else {
        turns.push({ toolCalls: [{ name: 'bash', args: { command: `echo ${i} >> count.txt` } }], usage });
      }
    }
    const model = scriptedModel(t.home, turns);
    const worker = spawnCli(['worker'], t.env);
    try {
      const started = await runCli(
        ['start', 'count to fifteen', '--workspace', t.workspace, '--model', model, '--json'],
        t.env,
      );
      expect(started.code, started.stderr).toBe(0);
      const { sessionId, workflowId, runId } = JSON.parse(started.stdout);
      const watched = await runCli(['watch', sessionId, '--json'], t.env);
      expect(watched.code, watched.stdout + watched.stderr).toBe(0);
      const final = JSON.parse(watched.stdout);
      expect(final).toMatchObject({ status: 'completed', steps: 15, iteration: 5, noProgress: 0 });
      const inputs = Array.from({ length: 15 }, (_, i) => 100 * (i + 1));
      expect(final.usage).toMatchObject({
        inputTokens: inputs.reduce((a, b) => a + b, 0),
        outputTokens: 150,
        contextTokens: 1510,
        requests: 15,
      });
      const firstRun = await fetchHistory(server.address, workflowId, runId);
      const last = firstRun.at(-1)!.event;
      expect(last.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
      expect(firstRun.length).toBeLessThan(120);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
