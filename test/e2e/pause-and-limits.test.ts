/**
 * Issue 11 acceptance 3 and 4: a paused goal stays paused past its time limit (the limit stops with
 * it), survives a worker restart, and goes on with the same step count after unpause; /limits raises
 * the step limit of a goal waiting at it, with no new execution, and the goal goes on.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { startGoal, statusOf, waitForSteps } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

const MODEL = 'openai-compatible:test-model';

describe('pause and limits', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('a paused goal outlives its time limit and a worker restart, then goes on where it was', async () => {
    const t = goalTestEnv('pause');
    let release = false;
    // Each tick prints something new: identical calls with identical output would trip the breaker.
    let tick = 0;
    server.setFallback((body) =>
      release && (body.tools?.length ?? 0) > 0
        ? { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] }
        : { toolCalls: [{ name: 'bash', args: { command: `sleep 0.2; echo tick ${++tick}` } }] },
    );
    let worker = spawnCli(['worker'], t.env);
    try {
      const started = await startGoal(t, server, 'tick', ['--max-minutes', '1']);
      const id = started.sessionId as string;
      await waitForSteps(t, id, 2);
      expectJson(await runCli(['pause', id, '--json'], t.env));
      const paused = await waitFor('paused', async () => {
        const view = await statusOf(t, id);
        return view.status === 'paused' ? view : undefined;
      });
      // Longer than the whole time limit, with a worker restart in the middle.
      await new Promise((resolve) => setTimeout(resolve, 45_000));
      await killAndWait(worker, 'SIGKILL');
      worker = spawnCli(['worker'], t.env);
      await new Promise((resolve) => setTimeout(resolve, 45_000));
      const still = await statusOf(t, id);
      expect(still).toMatchObject({ status: 'paused', steps: paused.steps });
      expect(still.elapsedMs as number).toBeLessThan(60_000);

      expectJson(await runCli(['unpause', id, '--json'], t.env));
      await waitFor(
        'a step after unpause',
        async () => ((await statusOf(t, id)).steps as number) > (paused.steps as number),
      );
      release = true;
      const final = expectJson(await runCli(['watch', id, '--json'], t.env, 120_000));
      expect(final.status).toBe('completed');
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  }, 360_000);

  it('/limits lifts a goal off its step limit with no new execution', async () => {
    const t = goalTestEnv('limits-raise');
    server.enqueue(
      { toolCalls: [{ name: 'bash', args: { command: 'echo 1' } }] },
      { toolCalls: [{ name: 'bash', args: { command: 'echo 2' } }] },
      { toolCalls: [{ name: 'bash', args: { command: 'echo 3' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'raised and done' } }] },
    );
    const worker = spawnCli(['worker'], t.env);
    const client = new Client({ connection: await Connection.connect({ address: t.temporalAddress }) });
    try {
      const run = await runCli(
        [
          'run',
          'count',
          '--no-worker',
          '--workspace',
          t.workspace,
          '--model',
          MODEL,
          '--base-url',
          server.url,
          '--max-steps',
          '2',
          '--json',
        ],
        t.env,
      );
      expect(run.code, run.stderr).toBe(4);
      const stopped = JSON.parse(run.stdout);
      expect(stopped).toMatchObject({ status: 'limit_reached', steps: 2 });
      const handle = client.workflow.getHandle(stopped.workflowId);
      const runId = (await handle.describe()).runId;
      // Waiting at the limit: the same execution still runs.
      expect((await handle.describe()).status.name).toBe('RUNNING');

      expectJson(await runCli(['limits', stopped.sessionId, '--max-steps', '10', '--json'], t.env));
      const final = expectJson(await runCli(['watch', stopped.sessionId, '--json'], t.env, 120_000));
      expect(final).toMatchObject({ status: 'completed', steps: 4 });
      const description = await handle.describe();
      expect(description.runId).toBe(runId);
      expect(description.status.name).toBe('COMPLETED');
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
