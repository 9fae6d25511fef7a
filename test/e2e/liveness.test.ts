/**
 * What status, list and watch say about a goal that is not moving: a worker killed with -9 shows
 * `waiting for a worker` (and the clock keeps counting, from the last recorded state), and a goal
 * whose history this build cannot replay shows `stuck: incompatible worker build` with the error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { shortIdOf } from '../../core/session-ids';
import { workflowIdOf } from '../../core/workflow-names';
import { killAndWait, runCli, scriptedModel, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { fetchHistory } from '../support/history';

const INCOMPATIBLE = path.resolve(__dirname, '../fixtures/incompatible/workflows.ts');

describe('liveness', () => {
  it('shows a worker killed with -9 as waiting for a worker, in status and list', async () => {
    const t = goalTestEnv('liveness-kill');
    const model = scriptedModel(t.home, [
      { toolCalls: [{ name: 'file-write', args: { path: 'a.txt', content: 'one\n' } }] },
      // Holds the goal in step 2 until the test writes `release` (or 10 minutes pass).
      {
        toolCalls: [
          {
            name: 'bash',
            args: {
              command:
                'touch started; for i in $(seq 1 3000); do [ -e release ] && break; sleep 0.2; done; echo done',
            },
          },
        ],
      },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'survived' } }] },
    ]);
    const worker = spawnCli(['worker'], t.env);
    const started = await runCli(
      ['start', 'outlive a worker', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(started.code, started.stderr).toBe(0);
    const { sessionId } = JSON.parse(started.stdout);
    const status = async () => JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
    await waitFor(
      'the slow command to start',
      () => fs.existsSync(path.join(t.workspace, 'started')),
      90_000,
    );
    // A live worker polling its queue while a long command runs is not "waiting for a worker".
    await new Promise((resolve) => setTimeout(resolve, 32_000));
    const alive = await status();
    expect(alive.liveness?.waitingForWorkerSince ?? null).toBeNull();
    expect(alive.shown).toBe('live');
    await killAndWait(worker, 'SIGKILL');

    const gone = await waitFor(
      'status to say waiting for a worker',
      async () => {
        const view = await status();
        return view.liveness?.waitingForWorkerSince ? view : undefined;
      },
      120_000,
      1_000,
    );
    expect(gone.status).toBe('running');
    expect(gone.shown).toBe('last recorded state');
    expect(gone.steps).toBeGreaterThanOrEqual(alive.steps - 1);
    const text = await runCli(['status', sessionId], t.env);
    expect(text.stdout).toMatch(/status\s+waiting for a worker since \d\d:\d\d:\d\d UTC/);
    expect(text.stdout).toContain('shown      the last recorded state');
    // The clock keeps counting while nobody runs the goal.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const later = await status();
    expect(later.elapsedMs).toBeGreaterThan(gone.elapsedMs);
    const list = await runCli(['list'], t.env);
    expect(list.stdout).toMatch(new RegExp(`${shortIdOf(sessionId)}\\s+waiting for a worker`));

    // The next worker runs the command again: this time it ends.
    fs.writeFileSync(path.join(t.workspace, 'release'), '');
    const second = spawnCli(['worker'], t.env);
    try {
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
      expect(watched.code, watched.stderr).toBe(0);
      expect(JSON.parse(watched.stdout).status).toBe('completed');
    } finally {
      await killAndWait(second, 'SIGTERM');
    }
  }, 400_000);

  it('shows a goal this build cannot replay as stuck: incompatible worker build', async () => {
    const t = goalTestEnv('liveness-stuck');
    const model = scriptedModel(t.home, [
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'never' } }] },
    ]);
    // Another build's worker takes the goal's first workflow task, then goes away.
    const { code } = await bundleWorkflowCode({
      workflowsPath: INCOMPATIBLE,
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error },
    });
    const connection = await NativeConnection.connect({ address: t.temporalAddress });
    const other = await Worker.create({ connection, taskQueue: t.taskQueue, workflowBundle: { code } });
    const otherRun = other.run();
    const started = await runCli(
      ['start', 'be stuck', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(started.code, started.stderr).toBe(0);
    const { sessionId } = JSON.parse(started.stdout);
    // Picked up means its first workflow task completed: the other build's timer is in the history.
    const workflowId = workflowIdOf(sessionId);
    await waitFor(
      'the other build to start its timer',
      async () => {
        const events = await fetchHistory(t.temporalAddress, workflowId).catch(() => []);
        return events.some(({ event }) => event.timerStartedEventAttributes);
      },
      60_000,
      300,
    );
    other.shutdown();
    await otherRun;
    await connection.close();

    const worker = spawnCli(['worker'], t.env);
    try {
      // The next workflow task goes to this build's worker, the only one polling now.
      const client = await Connection.connect({ address: t.temporalAddress });
      await new Client({ connection: client }).workflow.getHandle(workflowId).signal('poke');
      await client.close();
      const stuck = await waitFor(
        'status to say the goal is stuck',
        async () => {
          const view = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
          return view.liveness?.stuck ? view : undefined;
        },
        120_000,
        1_000,
      );
      expect(stuck.liveness.stuck).toMatch(/TMPRL1100|[Nn]ondetermin/);
      expect(stuck.liveness.stuck).not.toContain('\n');
      const text = await runCli(['status', sessionId], t.env);
      expect(text.stdout).toMatch(/status\s+stuck: incompatible worker build: .*(TMPRL1100|ondetermin)/);
      const list = await runCli(['list'], t.env);
      expect(list.stdout).toMatch(
        new RegExp(`${shortIdOf(sessionId)}\\s+stuck: incompatible worker build \\(`),
      );
    } finally {
      await killAndWait(worker, 'SIGKILL');
      await runCli(['cancel', sessionId], t.env).catch(() => undefined);
    }
  }, 300_000);
});
