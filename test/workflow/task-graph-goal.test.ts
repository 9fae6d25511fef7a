/**
 * Issue 3 acceptance: a scripted goal builds a plan with dependencies, works through it (a cycle
 * rejected, a blocked transition refused), is cancelled and resumed, and ends with the graph in the
 * store identical to the `tasks` query and to `goalrun tasks --json`. Its histories replay cleanly.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { taskView } from '../../core/task-graph';
import type { TaskGraph } from '../../core/task-graph-types';
import { packageVersion } from '../../worker/build-info';
import { tasksQuery } from '../../workflows/definitions';
import { killAndWait, runCli, scriptedModel, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { historyJson, saveHistoryFixture } from '../support/history-fixtures';

const BUNDLE = path.resolve(__dirname, '../../dist/workflow-bundle.js');

const plan = {
  todos: [
    { content: 'Write lib.js' },
    { content: 'Test lib.js', dependencies: ['task-1'] },
    { content: 'Document lib.js', dependencies: ['task-2'] },
  ],
};

const turns = [
  // A plan-only step: it gets the nudge.
  { toolCalls: [{ name: 'todo-write', args: plan }] },
  // A cycle: rejected, nothing changes.
  {
    toolCalls: [
      { name: 'todo-write', args: { merge: true, todos: [{ id: 'task-1', dependencies: ['task-3'] }] } },
      { name: 'file-write', args: { path: 'lib.js', content: 'module.exports = (a, b) => a + b;\n' } },
    ],
  },
  // A blocked transition: task-2 cannot start while task-1 is pending.
  {
    toolCalls: [
      { name: 'task-update', args: { id: 'task-2', status: 'in_progress' } },
      { name: 'bash', args: { command: 'node -e "console.log(require(\'./lib.js\')(2, 3))"' } },
    ],
  },
  // task-1 done; then a long command during which the goal is cancelled.
  {
    toolCalls: [
      { name: 'todo-write', args: { merge: true, todos: [{ id: 'task-1', status: 'completed' }] } },
      { name: 'bash', args: { command: 'touch long-started; sleep 300' } },
    ],
  },
  {
    toolCalls: [
      { name: 'todo-write', args: { merge: true, todos: [{ id: 'task-2', status: 'completed' }] } },
      { name: 'file-read', args: { path: 'lib.js' } },
    ],
  },
  {
    toolCalls: [
      { name: 'todo-write', args: { merge: true, todos: [{ id: 'task-3', status: 'in_progress' }] } },
      { name: 'file-write', args: { path: 'README.md', content: 'lib.js adds two numbers.\n' } },
    ],
  },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'lib, test and docs done' } }] },
];

describe('the task graph in a goal', () => {
  it('survives cancel and resume and agrees across store, query and CLI', async () => {
    const t = goalTestEnv('tasks');
    const model = scriptedModel(t.home, turns);
    const worker = spawnCli(['worker'], t.env);
    const connection = await Connection.connect({ address: t.temporalAddress });
    const client = new Client({ connection });
    const store = await testStore(t.databaseUrl);
    try {
      const started = await runCli(
        ['start', 'write, test and document lib.js', '--workspace', t.workspace, '--model', model, '--json'],
        t.env,
      );
      expect(started.code, started.stderr).toBe(0);
      const { sessionId, workflowId, runId } = JSON.parse(started.stdout);
      await waitFor('the long command', () => fs.existsSync(path.join(t.workspace, 'long-started')));
      const live = await client.workflow.getHandle(workflowId).query(tasksQuery);
      expect(live.map((task) => [task.id, task.status])).toEqual([
        ['task-1', 'completed'],
        ['task-2', 'pending'],
        ['task-3', 'pending'],
      ]);
      expect(live[1].ready).toBe(true);
      expect(live[2].blocked_by).toEqual(['task-2']);

      expect((await runCli(['cancel', sessionId], t.env)).code).toBe(0);
      await waitFor(
        'cancelled',
        async () =>
          JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout).status === 'cancelled',
      );
      const afterCancel = await runCli(['tasks', sessionId, '--json'], t.env);
      expect(JSON.parse(afterCancel.stdout).map((task: { status: string }) => task.status)).toEqual([
        'completed',
        'pending',
        'pending',
      ]);

      const resumed = await runCli(['resume', sessionId, '--no-worker', '--json'], t.env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'completed', steps: turns.length });

      // The results the model saw.
      const results = (await store.listMessages(sessionId))
        .filter((m) => m.message.role === 'tool')
        .map((m) => m.message.content[0] as { toolName: string; output: { type: string; value: string } });
      const todoResults = results.filter((r) => r.toolName === 'todo-write' || r.toolName === 'task-update');
      expect(todoResults[0].output.value).toContain(
        'Plan updated. Continue with the next concrete action in the same response next time.',
      );
      expect(todoResults[1].output.type).toBe('error-text');
      expect(todoResults[1].output.value).toMatch(/cycle/i);
      expect(todoResults[1].output.value).toMatch(/task-1.*task-3|task-3.*task-1/);
      expect(todoResults[2].output.type).toBe('error-text');
      expect(todoResults[2].output.value).toMatch(/task-2 cannot .*in_progress.* task-1/);
      for (const later of todoResults.slice(2)) expect(later.output.value).not.toContain('Plan updated');

      // Store, query and CLI agree.
      const checkpoint = await store.latestCheckpoint(sessionId);
      const fromStore = taskView(checkpoint!.tasks as TaskGraph);
      const fromQuery = await client.workflow.getHandle(workflowId).query(tasksQuery);
      const fromCli = JSON.parse((await runCli(['tasks', sessionId, '--json'], t.env)).stdout);
      expect(fromQuery).toEqual(fromStore);
      expect(fromCli).toEqual(fromStore);
      expect(fromStore.map((task) => [task.id, task.status])).toEqual([
        ['task-1', 'completed'],
        ['task-2', 'completed'],
        ['task-3', 'in_progress'],
      ]);

      // Both executions replay deterministically against today's workflow code.
      const histories = [
        await client.workflow.getHandle(workflowId, runId).fetchHistory(),
        await client.workflow.getHandle(workflowId).fetchHistory(),
      ];
      for (const history of histories) {
        await Worker.runReplayHistory({ workflowBundle: { codePath: BUNDLE } }, history, workflowId);
      }
      if (process.env.GOALRUN_SAVE_HISTORY_FIXTURE) {
        saveHistoryFixture(packageVersion(), 'task-graph-goal', histories.map(historyJson));
      }
    } finally {
      await killAndWait(worker, 'SIGTERM');
      await store.close();
      await connection.close();
    }
  });
});
