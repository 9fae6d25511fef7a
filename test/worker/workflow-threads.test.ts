/**
 * worker/workflow-threads.ts: a `goalrun worker` starts the SDK's workflow threads without the SDK's
 * per-promise stack capture. Seen from outside: the `__stack_trace` query, which that capture exists
 * for, says stack traces are off, while the goal it asks runs to its end as always. If an SDK upgrade
 * moves what workflow-thread-entry.ts turns off, the query answers with stacks and this test fails.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { startGoal, statusOf } from '../support/goal-steps';
import { type OpenAITestServer, requestStep, startOpenAITestServer } from '../support/openai-test-server';

describe('the workflow threads of a goalrun worker', () => {
  let server: OpenAITestServer;
  let connection: Connection | undefined;
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let reached: () => void = () => {};
  const atGate = new Promise<void>((resolve) => {
    reached = resolve;
  });
  beforeAll(async () => {
    server = await startOpenAITestServer({
      fallback: async (body) => {
        if (requestStep(body) === 1) {
          // The goal's workflow is waiting on this call until the test has asked its stacks.
          reached();
          await held;
          return { toolCalls: [{ name: 'bash', args: { command: 'echo held and answered' } }] };
        }
        return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };
      },
    });
  });
  afterAll(async () => {
    release();
    await server?.close();
    await connection?.close();
  });

  it('answer the stack trace query with "not enabled", and run the goal to its end', {
    timeout: 120_000,
  }, async () => {
    const t = goalTestEnv('workflow-threads', { OPENAI_API_KEY: 'sk-test' });
    connection = await Connection.connect({ address: t.temporalAddress });
    const client = new Client({ connection });
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId, workflowId } = await startGoal(t, server, 'answer after the stack query');
      await atGate;
      const handle = client.workflow.getHandle(workflowId);
      await expect(handle.query('__stack_trace')).rejects.toThrow(
        /Workflow stack traces are not enabled on this worker/,
      );
      // The other built-in queries still answer from the same workflow thread.
      const metadata = (await handle.query('__temporal_workflow_metadata')) as {
        definition?: { type?: string };
      };
      expect(metadata.definition?.type).toBe('goalWorkflow');
      release();
      const done = await waitFor(
        'the goal to complete',
        async () => {
          const view = await statusOf(t, sessionId);
          return view.status === 'completed' ? view : undefined;
        },
        90_000,
        500,
      );
      expect(done.steps).toBe(2);
    } finally {
      await killAndWait(worker);
    }
  });
});
