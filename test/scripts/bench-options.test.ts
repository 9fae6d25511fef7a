/**
 * Every benchmark script answers --help with its own description and refuses a wrong option or value
 * in one line (exit 2), before it starts a server or creates a database. Run as a user runs them:
 * `node scripts/bench-….js` in a subprocess.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SCRIPTS = path.resolve(__dirname, '../../scripts');
const BENCHES = fs
  .readdirSync(SCRIPTS)
  .filter((name) => /^bench-.*\.js$/.test(name))
  .sort();

function run(script: string, args: string[]) {
  const result = spawnSync(process.execPath, [path.join(SCRIPTS, script), ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('the benchmark scripts', () => {
  it('are found', () => {
    expect(BENCHES.length).toBeGreaterThanOrEqual(10);
  });

  it.each(BENCHES)('%s prints its description on --help and exits 0', (script) => {
    const header = fs.readFileSync(path.join(SCRIPTS, script), 'utf8').match(/\/\*\*\s*\n\s*\* (.+)/)?.[1];
    const { code, stdout, stderr } = run(script, ['--help']);
    expect(code, stderr).toBe(0);
    expect(header).toBeTruthy();
    expect(stdout).toContain(header!.trim());
    expect(stdout).not.toMatch(/^\s*\*/m);
  });

  it.each(BENCHES)('%s names an unknown option in one line and exits 2', (script) => {
    const { code, stdout, stderr } = run(script, ['--no-such-option']);
    expect(code, stdout + stderr).toBe(2);
    expect(stderr).toContain(`${script}: Unknown option '--no-such-option'`);
    expect(stderr).toContain('--help describes the options');
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  it('names a wrong value the same way, before anything starts', () => {
    const steps = run('bench-step-overhead.js', ['--steps', '1']);
    expect(steps.code).toBe(2);
    expect(steps.stderr.trim()).toBe(
      'bench-step-overhead.js: --steps must be an integer >= 2 (--help describes the options)',
    );
    const concurrent = run('bench-step-overhead.js', ['--concurrent=0']);
    expect(concurrent.code).toBe(2);
    expect(concurrent.stderr).toContain('--concurrent must be an integer >= 1');
  });
});
