/**
 * Issue 31: a worker whose log file cannot be written keeps running. `run` hosts a worker whose log
 * goes to GOALRUN_HOME/logs/worker.log; here that file is /dev/full, where every write fails with
 * ENOSPC as on a full disk. Without an 'error' listener on the log stream the first log line crashed
 * the process, and the goal with it; now it is said once, and the goal completes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';

describe('a worker whose log file cannot be written', () => {
  it('keeps running the goal, and says once that the log is lost', async () => {
    const t = goalTestEnv('unwritable-log');
    fs.mkdirSync(path.join(t.home, 'logs'), { recursive: true });
    fs.symlinkSync('/dev/full', path.join(t.home, 'logs', 'worker.log'));
    const model = scriptedModel(t.home, [
      { toolCalls: [{ name: 'bash', args: { command: 'echo one' } }] },
      // A failing call: the worker logs its failure (more writes to the broken log).
      { toolCalls: [{ name: 'file-read', args: { path: 'missing.txt' } }] },
      { toolCalls: [{ name: 'bash', args: { command: 'echo two > two.txt' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done without a log' } }] },
    ]);
    const result = await runCli(
      ['run', 'work without a log', '--workspace', t.workspace, '--model', model],
      t.env,
    );
    expect(result.stderr).toMatch(
      /goalrun: the worker log .*worker\.log cannot be written \(ENOSPC[^)]*\); the worker goes on without it/,
    );
    expect(result.stderr.match(/cannot be written/g)).toHaveLength(1);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/goal completed/);
    expect(fs.readFileSync(path.join(t.workspace, 'two.txt'), 'utf8')).toBe('two\n');
  });
});
