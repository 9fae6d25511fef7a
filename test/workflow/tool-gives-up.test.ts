/**
 * Issue 9 item 7: a tool activity that runs out of retries (its host keeps failing) becomes an
 * error result the model sees, not a failed goal.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { createCompactionActivities } from '../../activities/compaction-activities';
import { createGoalActivities } from '../../activities/workflow-activities';
import { TOOL_STEP_MAX_ATTEMPTS } from '../../core/limits';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';

const BUNDLE = path.resolve(__dirname, '../../dist/workflow-bundle.js');

describe('a tool that keeps failing', () => {
  it('ends as an error result after its retries, and the goal goes on', async () => {
    const t = goalTestEnv('tool-gives-up');
    const store = await testStore(t.databaseUrl);
    const real = createGoalActivities({ store, env: {} });
    let attempts = 0;
    const activities = {
      ...real,
      ...createCompactionActivities({ store, env: {} }),
      // The tool host breaks on every attempt, as a crashing or misconfigured host would.
      async runTool(): Promise<never> {
        attempts += 1;
        throw ApplicationFailure.create({
          message: `tool host broken (attempt ${attempts})`,
          type: 'HostBroken',
        });
      },
    };
    const model = scriptedModel(t.home, [
      { toolCalls: [{ name: 'bash', args: { command: 'echo never runs' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'went on without the tool' } }] },
    ]);
    const connection = await NativeConnection.connect({ address: t.temporalAddress });
    const worker = await Worker.create({
      connection,
      taskQueue: t.taskQueue,
      workflowBundle: { codePath: BUNDLE },
      activities,
    });
    const client = new Client({ connection: await Connection.connect({ address: t.temporalAddress }) });
    const started = await runCli(
      ['start', 'use a broken tool', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(started.code, started.stderr).toBe(0);
    const { workflowId, sessionId } = JSON.parse(started.stdout);
    const result = await worker.runUntil(client.workflow.getHandle(workflowId).result());
    expect(result).toMatchObject({ status: 'completed', steps: 2 });
    expect(attempts).toBe(TOOL_STEP_MAX_ATTEMPTS);
    const results = (await store.listMessages(sessionId)).filter((m) => m.message.role === 'tool');
    expect(JSON.stringify(results[0].message)).toContain('the tool could not be run: tool host broken');
    expect(JSON.stringify(results[0].message)).toContain('error-text');
    await store.close();
    await connection.close();
  });
});
