/**
 * Issue 24 item 5: a store outage is a wait, never a failure. The workflow's store calls give up
 * after STORE_CALL_WINDOW_MS (30 minutes in the real build, 3 seconds in the build of this test);
 * the database stays down until the goal shows `waiting_store`, which only happens after a call gave
 * up, so the outage outlasts the window: before patch store-outage-wait that failed the goal. Here it
 * waits, and completes once the database is back, with `completed` in its store row.
 * The database is a private server of this test: the suite's shared one must stay up.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webpack from 'webpack';
import { createCompactionActivities } from '../../activities/compaction-activities';
import { createGoalActivities } from '../../activities/workflow-activities';
import { GoalStatusKey, stateQuery } from '../../workflows/definitions';
import { runCli, scriptedModel, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { type PrivatePostgres, startPrivatePostgres } from '../support/private-postgres';

const BUNDLE = path.resolve(__dirname, '../../dist/workflow-bundle.js');
const SHORT_LIMITS = path.resolve(__dirname, '../fixtures/short-store-window/limits.ts');

/** The workflow bundle with core/limits replaced by one whose store-call window is 3 seconds. */
async function shortWindowBundle(): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../../workflows/index.ts'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error },
    webpackConfigHook: (config) => {
      config.plugins = [
        ...(config.plugins ?? []),
        new webpack.NormalModuleReplacementPlugin(
          /core\/limits$/,
          (resource: { context: string; request: string }) => {
            if (!resource.context.includes(path.join('fixtures', 'short-store-window')))
              resource.request = SHORT_LIMITS;
          },
        ),
      ];
      return config;
    },
  });
  return code;
}

describe('a store outage longer than a store call may retry', () => {
  let pg: PrivatePostgres;
  beforeAll(async () => {
    pg = await startPrivatePostgres();
  });
  afterAll(() => pg?.destroy());

  it('makes the goal wait as waiting_store, and it completes once the store is back', async () => {
    const t = goalTestEnv('store-outage-wait', { DATABASE_URL: pg.url });
    const store = await testStore(pg.url);
    const real = createGoalActivities({ store, env: {} });
    let stopped = false;
    const activities = {
      ...real,
      ...createCompactionActivities({ store, env: {} }),
      // The database goes down right after the tool's result is stored: the workflow's next store call
      // (the daily reservation before the next model call) meets the outage.
      async runTool(...args: Parameters<typeof real.runTool>) {
        const result = await real.runTool(...args);
        if (!stopped) pg.stop();
        stopped = true;
        return result;
      },
    };
    const model = scriptedModel(t.home, [
      { toolCalls: [{ name: 'bash', args: { command: 'echo one > one.txt' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done after the outage' } }] },
    ]);
    const connection = await NativeConnection.connect({ address: t.temporalAddress });
    const client = new Client({ connection: await Connection.connect({ address: t.temporalAddress }) });
    const worker = await Worker.create({
      connection,
      taskQueue: t.taskQueue,
      workflowBundle: { code: await shortWindowBundle() },
      activities,
    });
    // With a daily budget every model call first reserves against it: a store call of the workflow itself.
    const budget = await runCli(['budget', 'set', '--daily-usd', '100'], t.env);
    expect(budget.code, budget.stderr).toBe(0);
    const started = await runCli(
      ['start', 'work through a store outage', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(started.code, started.stderr).toBe(0);
    const { workflowId, sessionId } = JSON.parse(started.stdout);
    const handle = client.workflow.getHandle(workflowId);

    const result = await worker.runUntil(async () => {
      // Held down until the workflow says it waits: a store call has given up at least once by then.
      // Only once the database is down: on a loaded machine a call may outlast the short window before.
      const waiting = await waitFor(
        'the goal to wait for the store',
        async () => {
          const snapshot = await handle.query(stateQuery);
          return stopped && snapshot.status === 'waiting_store' ? snapshot : undefined;
        },
        90_000,
        200,
      );
      expect(waiting.reason).toMatch(/^waiting for the store \(\w+\): /);
      await waitFor('GoalStatus waiting_store', async () => {
        const description = await handle.describe();
        return description.typedSearchAttributes.get(GoalStatusKey) === 'waiting_store';
      });
      // Still running, not failed: the wait outlasted the window.
      expect((await handle.describe()).status.name).toBe('RUNNING');
      pg.start();
      return handle.result();
    });
    expect(result).toMatchObject({ status: 'completed', steps: 2 });
    expect((await handle.describe()).typedSearchAttributes.get(GoalStatusKey)).toBe('completed');
    expect((await store.getSession(sessionId))?.status).toBe('completed');
    await store.close();
    await connection.close();
  });

  it('takes a model step that gave up on the store again once the store is back', async () => {
    const t = goalTestEnv('store-outage-model-step');
    const store = await testStore(t.databaseUrl);
    const real = createGoalActivities({ store, env: {} });
    let storeDown = true;
    let refused = 0;
    const activities = {
      ...real,
      ...createCompactionActivities({ store, env: {} }),
      // As a step whose every attempt met the outage ends: its retries spent, the last failure StoreUnavailable.
      async modelStep(...args: Parameters<typeof real.modelStep>) {
        if (storeDown) {
          refused += 1;
          throw ApplicationFailure.create({
            type: 'StoreUnavailable',
            message: 'session store: connect ECONNREFUSED 127.0.0.1:5432',
            nonRetryable: true,
          });
        }
        return real.modelStep(...args);
      },
    };
    const model = scriptedModel(t.home, [
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done after the outage' } }] },
    ]);
    const connection = await NativeConnection.connect({ address: t.temporalAddress });
    const client = new Client({ connection: await Connection.connect({ address: t.temporalAddress }) });
    const worker = await Worker.create({
      connection,
      taskQueue: t.taskQueue,
      workflowBundle: { codePath: BUNDLE },
      activities,
    });
    const started = await runCli(
      ['start', 'take a step through a store outage', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(started.code, started.stderr).toBe(0);
    const { workflowId, sessionId } = JSON.parse(started.stdout);
    const handle = client.workflow.getHandle(workflowId);
    const result = await worker.runUntil(async () => {
      const waiting = await waitFor('the goal to wait for the store', async () => {
        const snapshot = await handle.query(stateQuery);
        return snapshot.status === 'waiting_store' ? snapshot : undefined;
      });
      expect(waiting.reason).toContain('modelStep');
      expect(waiting.reason).toContain('ECONNREFUSED');
      storeDown = false;
      return handle.result();
    });
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(result).toMatchObject({ status: 'completed', steps: 1, reason: null });
    expect((await store.getSession(sessionId))?.status).toBe('completed');
    await store.close();
    await connection.close();
  });
});
