/** Acceptance 6: iteration and step limits end as limit_reached (exit 4); idle iterations block the goal, or pause it (runaway breaker, issue 18). */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { goalResult } from '../../cli/goal-result';
import { killAndWait, runCli, scriptedModel, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';

const busyTurn = (n: number) => ({
  toolCalls: [{ name: 'bash', args: { command: `echo step ${n} >> log.txt` } }],
});
const talkTurn = (text: string) => ({ text });

describe('goal limits', () => {
  it('stops at the step limit with limit_reached and exit code 4', async () => {
    const t = goalTestEnv('steps');
    const model = scriptedModel(
      t.home,
      Array.from({ length: 10 }, (_, i) => busyTurn(i + 1)),
    );
    const result = await runCli(
      ['run', 'keep busy', '--workspace', t.workspace, '--model', model, '--max-steps', '3', '--json'],
      t.env,
    );
    expect(result.code, result.stderr).toBe(4);
    expect(JSON.parse(result.stdout)).toMatchObject({
      status: 'limit_reached',
      steps: 3,
      reason: 'step limit reached (3 steps)',
    });
  });

  it('stops at the iteration limit with limit_reached and exit code 4', async () => {
    const t = goalTestEnv('iterations');
    // Each iteration: one tool step (progress), then an answer without a tool call ends the turn.
    const turns = Array.from({ length: 5 }, (_, i) => [busyTurn(i), talkTurn(`turn ${i} done`)]).flat();
    const model = scriptedModel(t.home, turns);
    const result = await runCli(
      [
        'run',
        'keep talking',
        '--workspace',
        t.workspace,
        '--model',
        model,
        '--max-iterations',
        '2',
        '--json',
      ],
      t.env,
    );
    expect(result.code, result.stderr).toBe(4);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({
      status: 'limit_reached',
      steps: 4,
      reason: 'iteration limit reached (2 iterations)',
    });
    expect(status.noProgress).toBe(0);
  });

  it('pauses a model that answers three turns in a row without a tool call (runaway breaker)', async () => {
    const t = goalTestEnv('idleturns');
    const model = scriptedModel(t.home, [
      busyTurn(0),
      talkTurn('did a thing'),
      talkTurn('thinking'),
      talkTurn('still thinking'),
      talkTurn('hmm'),
    ]);
    const run = spawnCli(['run', 'idle', '--workspace', t.workspace, '--model', model, '--json'], t.env);
    // The store is shared with the other test files of the run, so the newest goal listed may be
    // another file's: this test's goal is the one in its workspace. (It failed under load by reading
    // list[0]: another test's goal, which never paused, or had paused for a reason of its own.)
    const workspaces = [t.workspace, fs.realpathSync(t.workspace)];
    let last: unknown;
    try {
      const sessionId = await waitFor(
        'the goal in the list',
        async () => {
          const listed = await runCli(['list', '--json', '--limit', '100'], t.env);
          const goals = JSON.parse(listed.stdout) as Array<{ sessionId: string; workspace?: string }>;
          return goals.find((goal) => workspaces.includes(goal.workspace ?? ''))?.sessionId;
        },
        120_000,
        300,
      );
      const paused = await waitFor(
        'the breaker to pause the goal',
        async () => {
          last = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
          return (last as { status?: string }).status === 'paused' ? last : undefined;
        },
        120_000,
        300,
      );
      expect(paused).toMatchObject({
        steps: 4,
        reason: 'runaway breaker: 3 model turns in a row without a tool call or finish',
      });
      const cancelled = await runCli(['cancel', sessionId], t.env);
      expect(cancelled.code, `${cancelled.stdout}\n${cancelled.stderr}`).toBe(0);
    } catch (err) {
      throw new Error(
        `${(err as Error).message}\nlast listed: ${JSON.stringify(last)}\n${diagnostics(t.home, run)}`,
      );
    } finally {
      await killAndWait(run, 'SIGTERM');
    }
  });

  it('blocks after three iterations without progress, saying why', async () => {
    const t = goalTestEnv('noprogress');
    // The runaway breaker would pause this talk first (test above): off, so the no-progress rule decides.
    fs.writeFileSync(path.join(t.home, 'config.json'), JSON.stringify({ breaker: { idle_turns: 0 } }));
    const model = scriptedModel(t.home, [
      busyTurn(0),
      talkTurn('did a thing'),
      talkTurn('thinking'),
      talkTurn('still thinking'),
      talkTurn('hmm'),
      busyTurn(9),
    ]);
    const result = await runCli(
      ['run', 'idle', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(result.code, result.stderr).toBe(1);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({ status: 'blocked', steps: 5, noProgress: 3 });
    expect(status.reason).toBe('no progress in 3 consecutive iterations (limit 3)');
  });

  it('ends as blocked when the model calls finish with status blocked', async () => {
    const t = goalTestEnv('finishblocked');
    const model = scriptedModel(t.home, [
      {
        toolCalls: [
          {
            name: 'finish',
            args: { status: 'blocked', summary: 'the API key for the staging server is missing' },
          },
        ],
      },
      // After the resume below.
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'deployed with the new key' } }] },
    ]);
    const result = await runCli(
      ['run', 'deploy', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(result.code).toBe(1);
    const ended = JSON.parse(result.stdout);
    expect(ended).toMatchObject({
      status: 'blocked',
      reason: 'the API key for the staging server is missing',
    });

    // Issue 26 item 1: the workflow fails (the Web UI's header reads Failed, not a green Completed),
    // with a typed non-retryable failure carrying the same result a completed goal returns.
    const connection = await Connection.connect({ address: t.temporalAddress });
    try {
      const handle = new Client({ connection }).workflow.getHandle(ended.workflowId);
      // `run` returns once the goal's status is final; the run closes after its last activities.
      const failure = await handle.result().then(
        () => null,
        (err: unknown) => err,
      );
      expect((await handle.describe()).status.name).toBe('FAILED');
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect((failure as WorkflowFailedError).cause).toMatchObject({
        type: 'GoalBlocked',
        message: 'the API key for the staging server is missing',
        nonRetryable: true,
      });
      const result = await goalResult(handle);
      expect(result).toMatchObject({
        sessionId: ended.sessionId,
        status: 'blocked',
        reason: 'the API key for the staging server is missing',
        steps: ended.steps,
      });
    } finally {
      await connection.close();
    }
    // What users see is unchanged: `status` says blocked, and `watch` of the ended goal exits 1 as `run` did.
    const shown = await runCli(['status', ended.sessionId, '--json'], t.env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'blocked' });
    const watched = await runCli(['watch', ended.sessionId, '--json'], t.env);
    expect(watched.code, watched.stderr).toBe(1);
    expect(JSON.parse(watched.stdout)).toMatchObject({ status: 'blocked' });
    // A goal whose run failed resumes as one that completed did.
    const resumed = await runCli(
      ['resume', ended.sessionId, '--message', 'the key is in .env now', '--json'],
      t.env,
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'completed', steps: 2 });
  });
});

/** The run's own output and the end of its worker's log, for a failure message. */
function diagnostics(home: string, run: ReturnType<typeof spawnCli>): string {
  const logFile = path.join(home, 'logs', 'worker.log');
  const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-6000) : '(no worker log)';
  return `run printed:\n${run.output().slice(-3000)}\nworker log (end):\n${log}`;
}
