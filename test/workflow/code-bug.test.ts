/**
 * Issue 9 item 6: a bug in workflow code fails the workflow task, not the goal, so deploying a
 * fixed build carries the goal on. A worker runs a build whose recordToolOutcome throws; the goal
 * stays running with failed workflow tasks; a worker with the fixed build then completes it.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import webpack from 'webpack';
import { createCompactionActivities } from '../../activities/compaction-activities';
import { createGoalActivities } from '../../activities/workflow-activities';
import { runCli, scriptedModel, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';

const BROKEN_RULES = path.resolve(__dirname, '../fixtures/broken/goal-rules.ts');
const FIXED_BUNDLE = path.resolve(__dirname, '../../dist/workflow-bundle.js');

/** The workflow bundle with core/goal-rules replaced by the broken one. */
async function brokenBundle(): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../../workflows/index.ts'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error },
    webpackConfigHook: (config) => {
      config.plugins = [
        ...(config.plugins ?? []),
        new webpack.NormalModuleReplacementPlugin(
          /core\/goal-rules$/,
          (resource: { context: string; request: string }) => {
            if (!resource.context.includes(path.join('fixtures', 'broken'))) resource.request = BROKEN_RULES;
          },
        ),
      ];
      return config;
    },
  });
  return code;
}

describe('a bug in workflow code', () => {
  it('fails the workflow task, and a fixed build completes the goal', async () => {
    const t = goalTestEnv('code-bug');
    const store = await testStore(t.databaseUrl);
    const activities = {
      ...createGoalActivities({ store, env: {} }),
      ...createCompactionActivities({ store, env: {} }),
    };
    const connection = await NativeConnection.connect({ address: t.temporalAddress });
    const client = new Client({ connection: await Connection.connect({ address: t.temporalAddress }) });
    const model = scriptedModel(t.home, [
      { toolCalls: [{ name: 'bash', args: { command: 'echo one > one.txt' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] },
    ]);
    const broken = await Worker.create({
      connection,
      taskQueue: t.taskQueue,
      workflowBundle: { code: await brokenBundle() },
      activities,
    });
    const brokenRun = broken.run();
    const started = await runCli(
      ['start', 'survive a bug', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(started.code, started.stderr).toBe(0);
    const { workflowId, sessionId } = JSON.parse(started.stdout);
    const handle = client.workflow.getHandle(workflowId);
    const failedTask = temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED;
    await waitFor('a failed workflow task', async () => {
      const history = await handle.fetchHistory();
      return (history.events ?? []).some((event) => event.eventType === failedTask);
    });
    // The goal is not failed: Temporal keeps retrying the task.
    expect((await handle.describe()).status.name).toBe('RUNNING');
    broken.shutdown();
    await brokenRun;

    const fixed = await Worker.create({
      connection,
      taskQueue: t.taskQueue,
      workflowBundle: { codePath: FIXED_BUNDLE },
      activities,
    });
    const result = await fixed.runUntil(handle.result());
    expect(result).toMatchObject({ status: 'completed', steps: 2 });
    // The tool ran once: its stored result is the one the fixed build saw.
    const messages = await store.listMessages(sessionId);
    expect(messages.filter((m) => m.message.role === 'tool')).toHaveLength(2);
    expect(new Set(messages.map((m) => m.key)).size).toBe(messages.length);
    await store.close();
    await connection.close();
  });
});
