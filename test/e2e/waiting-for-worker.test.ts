/**
 * Issue 7, acceptance 3: a goal that no worker has picked up is visible. `start` warns that nobody
 * polls its task queue; `status` and `list` show `waiting for a worker`; `tasks`, `stats` and `policy`
 * say so instead of failing; `watch` and `run --no-worker` warn too. Then a worker runs it to the end.
 */
import { describe, expect, it } from 'vitest';
import { shortIdOf } from '../../core/session-ids';
import { killAndWait, runCli, scriptedModel, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';

const finishTurn = { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'ran at last' } }] };

describe('a goal no worker has picked up', () => {
  it('is shown as waiting for a worker by every command, and runs once a worker comes', async () => {
    const t = goalTestEnv('waiting');
    const noWorker = `no worker is polling task queue ${t.taskQueue}; start one with: goalrun worker`;
    const model = scriptedModel(t.home, [finishTurn]);
    const started = await runCli(
      ['start', 'wait for a worker', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(started.code, started.stderr).toBe(0);
    const { sessionId, taskQueue } = JSON.parse(started.stdout);
    expect(taskQueue).toBe(t.taskQueue);
    expect(started.stderr).toContain(noWorker);

    const status = await runCli(['status', sessionId], t.env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^status {5}waiting for a worker/m);
    expect(status.stdout).toContain('objective  wait for a worker');
    expect(status.stderr).toContain(noWorker);
    const statusJson = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
    expect(statusJson).toMatchObject({ sessionId, status: 'waiting_for_worker', steps: 0, taskQueue });

    // Temporal's list is eventually consistent: the goal appears within moments.
    const listed = await waitFor('the goal in list', async () => {
      const list = await runCli(['list', '--json'], t.env);
      const views = JSON.parse(list.stdout) as Array<{ sessionId: string; status: string }>;
      return views.find((view) => view.sessionId === sessionId);
    });
    expect(listed.status).toBe('waiting_for_worker');
    const listText = await runCli(['list'], t.env);
    expect(listText.stdout).toMatch(new RegExp(`${shortIdOf(sessionId)}\\s+waiting for a worker`));

    for (const [command, what] of [
      ['tasks', 'task list'],
      ['stats', 'usage'],
      ['policy', 'context budget'],
    ]) {
      const shown = await runCli([command, sessionId], t.env);
      expect(shown.code, `${command}: ${shown.stderr}`).toBe(0);
      expect(shown.stdout).toContain(
        `goal ${sessionId} is waiting for a worker: nothing has run yet, so it has no ${what} yet`,
      );
      expect(shown.stderr).not.toMatch(/no goal with|Failed to query/);
    }

    // watch first, and the worker only once watch has warned: a worker already polling would
    // (rightly) silence the warning.
    const watch = spawnCli(['watch', sessionId], t.env);
    const exited = new Promise<number | null>((resolve) => watch.once('exit', (code) => resolve(code)));
    let worker: ReturnType<typeof spawnCli> | undefined;
    try {
      await waitFor(
        'watch to warn about the missing worker',
        () => watch.output().includes(noWorker),
        30_000,
      );
      worker = spawnCli(['worker'], t.env);
      const polling = worker;
      await waitFor('the worker to poll', () =>
        polling.output().includes(`polling task queue ${t.taskQueue}`),
      );
      expect(await exited).toBe(0);
      expect(watch.output()).toMatch(/goal completed — 1 step, 1 iteration/);
    } finally {
      await killAndWait(watch);
      if (worker) await killAndWait(worker, 'SIGTERM');
    }
  });

  it('run --no-worker warns that nobody polls the queue', async () => {
    const t = goalTestEnv('noworker');
    const model = scriptedModel(t.home, [finishTurn]);
    const run = spawnCli(
      ['run', 'nobody runs me', '--workspace', t.workspace, '--model', model, '--no-worker'],
      t.env,
    );
    try {
      await waitFor(
        'the warning',
        () =>
          run
            .output()
            .includes(`no worker is polling task queue ${t.taskQueue}; start one with: goalrun worker`),
        30_000,
      );
    } finally {
      await killAndWait(run, 'SIGTERM');
    }
    // The goal is left waiting, and can be cancelled; it then ends once a worker sees it.
    const sessionId =
      /goalrun cancel (\S+)/.exec(run.output())?.[1] ?? /^goal (\S+)/m.exec(run.output())?.[1];
    expect(sessionId).toBeTruthy();
    const cancelled = await runCli(['cancel', sessionId!], t.env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
  });
});
