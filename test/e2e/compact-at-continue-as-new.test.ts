/**
 * Issue 9 item 4: a `compact` update that waits in the queue when continue-as-new is suggested is
 * run (or the goal would wait forever for its handlers to finish). Continue-as-new is forced every
 * few steps through the dev server's dynamic config, and compactions are requested without a pause
 * while the goal runs through several runs: every request is answered and the goal completes.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli } from '../support/cli';
import { compactionModel } from '../support/compaction-model';
import { goalTestEnv } from '../support/goal-env';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { startTestTemporalServer, type TestTemporalServer } from '../support/temporal-server';

const STEPS = 24;

describe('compact at continue-as-new', () => {
  let temporal: TestTemporalServer;
  let server: OpenAITestServer;
  beforeAll(async () => {
    temporal = await startTestTemporalServer({
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 30 },
    });
    server = await startOpenAITestServer();
  });
  afterAll(async () => {
    await server?.close();
    await temporal?.stop();
  });

  it('runs the queued compactions before continuing as new, so nothing hangs', async () => {
    const t = goalTestEnv('compact-can', { TEMPORAL_ADDRESS: temporal.address });
    const model = compactionModel({
      main: (n) =>
        n >= STEPS
          ? { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] }
          : { delayMs: 150, toolCalls: [{ name: 'bash', args: { command: `echo FACT-${n}: step ${n}` } }] },
    });
    server.setFallback(model.fallback);
    const worker = spawnCli(['worker'], t.env);
    try {
      const started = await runCli(
        [
          'start',
          'count with compactions',
          '--workspace',
          t.workspace,
          '--model',
          'openai-compatible:test-model',
          '--base-url',
          server.url,
          '--json',
        ],
        t.env,
      );
      expect(started.code, started.stderr).toBe(0);
      const { sessionId, workflowId } = JSON.parse(started.stdout);
      let running = true;
      const answered: number[] = [];
      const requests = (async () => {
        while (running) {
          const result = await runCli(['compact', sessionId, '--json'], t.env, 120_000);
          answered.push(result.code ?? -1);
        }
      })();
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 300_000);
      running = false;
      await requests;
      expect(watched.code, watched.stderr).toBe(0);
      expect(JSON.parse(watched.stdout)).toMatchObject({ status: 'completed', steps: STEPS });
      // Several compactions were answered while the goal ran (0), the last one may find it ended (2).
      expect(answered.filter((code) => code === 0).length).toBeGreaterThanOrEqual(3);
      expect(answered.every((code) => code === 0 || code === 2)).toBe(true);
      // And the goal did continue as new several times meanwhile.
      const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
      // Follow the chain of runs from the first one.
      let continued = 0;
      let runId: string | undefined = JSON.parse(started.stdout).runId;
      while (runId) {
        const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
        runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
        if (runId) continued += 1;
      }
      expect(continued).toBeGreaterThanOrEqual(2);
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
