/**
 * Issue 7, acceptance 2: cancelling a goal that no worker has picked up. `cancel` says that nothing
 * ran and that the goal ends as soon as a worker picks it up; `cancel --wait` says it waits for a
 * worker. Once a worker starts, the goal ends `cancelled` (within 5 s on a quiet machine) with a
 * session row, `list` shows it, and `resume` completes it.
 *
 * Needs the lead's workflow change (a goal cancelled before its first step opens its session and
 * ends as cancelled at once); before it, the worker retries saveCheckpoint on a missing session row.
 */
import { describe, expect, it } from 'vitest';
import { killAndWait, runCli, scriptedModel, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';

/**
 * Issue 7's acceptance: the goal ends this soon after a worker starts polling. Measured and printed,
 * not asserted: on a loaded machine each `goalrun status` the test polls with takes a second or more.
 * What is asserted instead, whatever the load: the goal ends without a step.
 */
const ENDS_TARGET_MS = 5_000;
/** Only a guard against a goal that never ends. */
const ENDS_HANG_MS = 60_000;

describe('cancel before any worker exists', () => {
  it('ends the goal as cancelled once a worker comes, and resume then completes it', async () => {
    const t = goalTestEnv('cancelearly');
    const model = scriptedModel(t.home, [
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done after all' } }] },
    ]);
    const started = await runCli(
      ['start', 'cancel me early', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(started.code, started.stderr).toBe(0);
    const { sessionId } = JSON.parse(started.stdout);

    const cancelled = await runCli(['cancel', sessionId], t.env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toContain('no worker has picked it up, so nothing ran');
    expect(cancelled.stdout).toContain('it ends as cancelled as soon as a worker picks it up');
    expect(cancelled.stdout).not.toContain('running tools are stopped and progress is saved');
    expect(cancelled.stderr).toContain(`no worker is polling task queue ${t.taskQueue}`);

    const wait = spawnCli(['cancel', sessionId, '--wait'], t.env);
    await waitFor('cancel --wait to say what it waits for', () =>
      wait.output().includes(`waiting for a worker on task queue ${t.taskQueue}`),
    );

    const worker = spawnCli(['worker'], t.env);
    try {
      await waitFor('the worker to poll', () =>
        worker.output().includes(`polling task queue ${t.taskQueue}`),
      );
      const pollingAt = Date.now();
      const view = await waitFor(
        'the goal to end as cancelled',
        async () => {
          const shown = await runCli(['status', sessionId, '--json'], t.env);
          const parsed = shown.code === 0 ? JSON.parse(shown.stdout) : null;
          return parsed?.status === 'cancelled' ? parsed : undefined;
        },
        ENDS_HANG_MS,
      );
      console.log(
        `cancelled ${Date.now() - pollingAt} ms after the worker polled (target ${ENDS_TARGET_MS} ms)`,
      );
      expect(view).toMatchObject({ sessionId, steps: 0 });
      // The workflow itself has closed: cancel --wait returns (a stuck workflow keeps it waiting).
      await waitFor('cancel --wait to return', () => wait.exitCode !== null, ENDS_HANG_MS);
      expect(wait.exitCode).toBe(0);
      expect(wait.output()).toMatch(/status {5}cancelled/);

      const store = await testStore(t.databaseUrl);
      expect(await store.getSession(sessionId)).toMatchObject({ status: 'cancelled' });
      await store.close();
      const listed = JSON.parse((await runCli(['list', '--json'], t.env)).stdout) as Array<{
        sessionId: string;
      }>;
      expect(listed.map((each) => each.sessionId)).toContain(sessionId);

      const resumed = await runCli(['resume', sessionId, '--no-worker', '--json'], t.env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ sessionId, status: 'completed', steps: 1 });
    } finally {
      await killAndWait(wait);
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
