/**
 * A gathering of the workspace context that keeps failing in the workflow task (the local activity of
 * patch gather-in-workflow-task, which fails with its own failure, not an ActivityFailure) is a note
 * in the goal's recent actions after its retries, as the activity's was: the goal goes on without
 * instructions, MCP tools and hooks.
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
import { localActivities } from '../support/history';

const BUNDLE = path.resolve(__dirname, '../../dist/workflow-bundle.js');

describe('a gathering that keeps failing in the workflow task', () => {
  it('ends as a note after its retries, and the goal goes on', async () => {
    const t = goalTestEnv('gather-gives-up');
    const store = await testStore(t.databaseUrl);
    let attempts = 0;
    const activities = {
      ...createGoalActivities({ store, env: {} }),
      ...createCompactionActivities({ store, env: {} }),
      async gatherWorkspaceContext(): Promise<never> {
        attempts += 1;
        throw ApplicationFailure.create({ message: `host broken (attempt ${attempts})`, type: 'HostBroken' });
      },
    };
    const model = scriptedModel(t.home, [
      {
        toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'went on without the context' } }],
      },
    ]);
    const connection = await NativeConnection.connect({ address: t.temporalAddress });
    const client = new Client({ connection: await Connection.connect({ address: t.temporalAddress }) });
    try {
      const worker = await Worker.create({
        connection,
        taskQueue: t.taskQueue,
        workflowBundle: { codePath: BUNDLE },
        activities,
      });
      const started = await runCli(
        ['start', 'gather on a broken host', '--workspace', t.workspace, '--model', model, '--json'],
        t.env,
      );
      expect(started.code, started.stderr).toBe(0);
      const { workflowId, sessionId } = JSON.parse(started.stdout);
      const handle = client.workflow.getHandle(workflowId);
      const result = await worker.runUntil(handle.result());
      expect(result).toMatchObject({ status: 'completed', steps: 1 });
      expect(attempts).toBe(TOOL_STEP_MAX_ATTEMPTS);

      // It was the local activity that gave up: no activity of that type was scheduled.
      const history = await handle.fetchHistory();
      const events = history.events ?? [];
      expect(localActivities(events).map((m) => m.type)).toContain('gatherWorkspaceContext');
      const scheduled = events.filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'gatherWorkspaceContext',
      );
      expect(scheduled).toEqual([]);

      // The goal's recent actions (status --json) say why it runs without its context.
      const status = await runCli(['status', sessionId, '--json'], t.env);
      expect(status.code, status.stderr).toBe(0);
      const recent = (JSON.parse(status.stdout).recent as Array<{ text: string }>).map(
        (action) => action.text,
      );
      expect(recent).toContain(
        `the tool host could not gather the workspace context: host broken (attempt ${TOOL_STEP_MAX_ATTEMPTS})`,
      );
    } finally {
      await store.close();
      await connection.close();
    }
  }, 120_000);
});
