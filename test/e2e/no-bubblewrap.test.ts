/**
 * A machine without bubblewrap, as a new user meets it: `run`, `start` and `worker --role tools`
 * refuse at once (exit 2, one line naming the install and --sandbox off) instead of starting a goal
 * whose every command fails; `goalrun demo` runs unsandboxed with a notice and says what it checked,
 * and a demo whose steps fail says so instead of "checked by running it". bwrap is hidden by a PATH
 * made of links to every program on the real PATH except the ones named.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, scriptedModel, tempDir } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';

/** A directory of links to the programs on PATH, without the ones in `hidden`. */
function pathWithout(hidden: readonly string[]): string {
  const dir = tempDir('path-without');
  for (const source of (process.env.PATH ?? '').split(path.delimiter)) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(source);
    } catch {
      continue;
    }
    for (const name of names) {
      if (hidden.includes(name) || fs.existsSync(path.join(dir, name))) continue;
      fs.symlinkSync(path.join(source, name), path.join(dir, name));
    }
  }
  return dir;
}

const NO_BWRAP_LINE =
  /^goalrun: sandbox unavailable: bubblewrap \(bwrap\) is not installed; install it \(apt-get install bubblewrap\) or run the goal with --sandbox off/m;

describe('a machine without bubblewrap', () => {
  const noBwrap = pathWithout(['bwrap']);

  it('run, start and worker --role tools exit 2 with one line naming the fix, and start no goal', async () => {
    const t = goalTestEnv('no-bwrap', { PATH: noBwrap });
    const model = scriptedModel(t.home, [
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'x' } }] },
    ]);
    for (const args of [
      ['run', 'say hi', '--workspace', t.workspace, '--model', model],
      ['start', 'say hi', '--workspace', t.workspace, '--model', model],
      ['worker', '--role', 'tools', '--workspace-root', t.workspace],
    ]) {
      const result = await runCli(args, t.env);
      expect(result.code, `${args[0]}: ${result.stdout}${result.stderr}`).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(NO_BWRAP_LINE);
    }
    const listed = await runCli(['list', '--json'], t.env);
    expect(listed.code, listed.stderr).toBe(0);
    // The store is shared with the other test files of the run: only this test's workspace counts.
    const mine = (JSON.parse(listed.stdout) as Array<{ workspace?: string }>).filter(
      (goal) => goal.workspace === t.workspace || goal.workspace === fs.realpathSync(t.workspace),
    );
    expect(mine).toEqual([]);
    // --sandbox off is the way out: the goal then runs, unsandboxed.
    const off = await runCli(
      ['run', 'say hi', '--workspace', t.workspace, '--model', model, '--sandbox', 'off'],
      t.env,
    );
    expect(off.code, off.stdout + off.stderr).toBe(0);
  });

  it('goalrun demo runs unsandboxed with a notice, says what it checked and shows the install line', async () => {
    const t = goalTestEnv('no-bwrap-demo', { PATH: noBwrap });
    const result = await runCli(['demo'], t.env, 150_000);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const out = result.stdout;
    expect(out).toMatch(/bubblewrap \(bwrap\) is not installed/);
    expect(out).toMatch(/notice: the demo runs its scripted goal UNSANDBOXED in its throwaway workspace /);
    expect(out).not.toMatch(/\(error\)/);
    expect(out).toMatch(/goal completed/);
    expect(out).toMatch(
      /demo checked: all 6 tool calls succeeded, and running greet\.js printed "Hello, goalrun"/,
    );
    expect(out).toMatch(/apt-get install bubblewrap/);
  });

  it('a demo whose steps fail says so and never "checked by running it"', async () => {
    // Without node on PATH the demo's `node greet.js` fails, as bash did on a machine without bwrap.
    const t = goalTestEnv('no-node-demo', { PATH: pathWithout(['bwrap', 'node']) });
    const result = await runCli(['demo'], t.env, 150_000);
    const out = result.stdout + result.stderr;
    expect(out).not.toMatch(/checked by running it|demo checked/);
    expect(out).toMatch(/demo FAILED: \d of 6 tool calls failed \(step 2 · bash/);
    expect(result.code, out).toBe(1);
  });
});
