/**
 * Issue 26 item 10, through the built CLI: every command survives a reader that goes away (exits 0
 * without a word, as `git log | head` does), `rename` works on a finished goal, and `list` says
 * `waiting for a worker` exactly when `status` does.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shortIdOf } from '../../core/session-ids';
import { CLI, expectJson, runCli, scriptedModel, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';

const finishTurn = { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };

/** Runs the CLI with its stdout's reader gone before it writes a byte: `goalrun ARGS | true`. */
function withClosedStdout(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe('ids and pipes', () => {
  it('renames a finished goal, agrees on waiting, and exits quietly into a closed pipe', async () => {
    const t = goalTestEnv('ids-pipes');
    const run = await runCli(
      [
        'run',
        'first errand',
        '--workspace',
        t.workspace,
        '--model',
        scriptedModel(t.home, [finishTurn]),
        '--json',
      ],
      t.env,
    );
    expect(run.code, run.stderr).toBe(0);
    const { sessionId } = JSON.parse(run.stdout) as { sessionId: string };

    // rename of a goal that has ended.
    const renamed = await runCli(['rename', sessionId, 'omega', 'errand'], t.env);
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stdout).toContain('session renamed to "omega errand"');
    expect(expectJson(await runCli(['status', sessionId, '--json'], t.env))).toMatchObject({
      status: 'completed',
      name: 'omega errand',
    });
    expect((await runCli(['status', sessionId], t.env)).stdout).toMatch(/^name {7}omega errand$/m);
    const listed = await runCli(['list'], t.env);
    expect(listed.stdout).toContain(`[omega errand] first errand`);

    // The ended goal given more to do, with no worker: both commands say it waits for one.
    const again = await runCli(
      [
        'start',
        'second errand',
        '--name',
        'omega errand',
        '--workspace',
        t.workspace,
        '--model',
        scriptedModel(t.home, [finishTurn]),
        '--json',
      ],
      t.env,
    );
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).sessionId).toBe(sessionId);
    expect(expectJson(await runCli(['status', sessionId, '--json'], t.env)).status).toBe(
      'waiting_for_worker',
    );
    const waiting = await waitFor('the goal in list', async () => {
      const list = JSON.parse((await runCli(['list', '--json'], t.env)).stdout) as Array<{
        sessionId: string;
        status: string;
      }>;
      return list.find((view) => view.sessionId === sessionId);
    });
    expect(waiting.status).toBe('waiting_for_worker');
    expect((await runCli(['list'], t.env)).stdout).toMatch(
      new RegExp(`${shortIdOf(sessionId)}\\s+waiting for a worker`),
    );
    for (const args of [
      ['--help'],
      ['--version'],
      ['store', 'status'],
      ['list'],
      ['sessions'],
      ['status', sessionId],
      ['search', 'errand'],
      ['transcript', sessionId],
    ]) {
      const closed = await withClosedStdout(args, t.env);
      expect(closed.code, `${args.join(' ')}: ${closed.stderr}`).toBe(0);
      expect(closed.stderr, args.join(' ')).not.toMatch(/EPIPE|cannot be written|Error|\n\s+at /);
    }
  });
});
