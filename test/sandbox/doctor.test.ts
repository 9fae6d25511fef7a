import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { formatDoctorLine, runDoctorChecks } from '../../activities/sandbox/doctor';
import { cliEnv, runCli } from '../support/cli';

const home = mkdtempSync(path.join(os.tmpdir(), 'goalrun-doctor-'));

describe('runDoctorChecks', () => {
  it('reports every item OK on a ready machine, one line each', async () => {
    const checks = await runDoctorChecks({
      env: { ...process.env, OPENAI_API_KEY: 'sk-doctor-test-key', ANTHROPIC_API_KEY: 'sk-ant-doctor' },
      home,
      databaseUrl: inject('databaseUrl'),
      describeStore: 'PostgreSQL at test',
      findTemporalBinary: () => '/usr/local/bin/temporal',
    });
    const lines = checks.map(formatDoctorLine);
    console.log(lines.join('\n'));
    expect(checks.map((check) => check.name)).toEqual([
      'bubblewrap',
      'resource limits',
      'ripgrep',
      'temporal CLI',
      'database',
      'OPENAI_API_KEY',
      'ANTHROPIC_API_KEY',
      'openai-compatible key',
    ]);
    expect(checks.every((check) => check.ok)).toBe(true);
    // Which key goes where (issue 24 §8).
    expect(lines[5]).toMatch(
      /OPENAI_API_KEY: set \(openai:<model> models work; sent to api\.openai\.com only\)/,
    );
    expect(lines[7]).toMatch(
      /openai-compatible key: OPENAI_COMPATIBLE_API_KEY not set: openai-compatible endpoints get no key.*OPENAI_API_KEY goes to api\.openai\.com only/,
    );
    expect(lines[0]).toMatch(/^ok {7}bubblewrap: bubblewrap [\d.]+ at \S+ starts a sandbox here$/);
    for (const line of lines) expect(line).not.toContain('\n');
    expect(lines.join('\n')).not.toContain('sk-doctor-test-key');
  });

  it('names the fix of every missing item, and never prints a password', async () => {
    const checks = await runDoctorChecks({
      env: { PATH: '/nonexistent' },
      home,
      databaseUrl: 'postgres://goalrun:hunter2-secret@127.0.0.1:1/goalrun',
      describeStore: 'PostgreSQL at 127.0.0.1:1/goalrun',
      findTemporalBinary: () => null,
      // Root, no cgroup to make, no util-linux.
      limitMechanism: { prlimit: null, nprocApplies: false },
    });
    const lines = checks.map(formatDoctorLine);
    console.log(lines.join('\n'));
    // A local endpoint without a key is fine: that line is never "missing".
    expect(checks.filter((check) => !check.ok).map((check) => check.name)).not.toContain(
      'openai-compatible key',
    );
    expect(checks.filter((check) => check.name !== 'openai-compatible key').every((check) => !check.ok)).toBe(
      true,
    );
    expect(lines).toEqual([
      expect.stringMatching(
        /^missing {2}bubblewrap: not installed.*; fix: apt-get install bubblewrap \(or run goals with --sandbox off\)$/,
      ),
      expect.stringMatching(
        /^missing {2}resource limits: memory by nothing, process count by nothing \(root without a writable pids cgroup\), CPU time by nothing \(prlimit missing\); fix: run the worker where it may create cgroups/,
      ),
      expect.stringMatching(/^missing {2}ripgrep: .*; fix: apt-get install ripgrep$/),
      expect.stringMatching(/^missing {2}temporal CLI: .*; fix: npm run temporal/),
      expect.stringMatching(
        /^missing {2}database: PostgreSQL at 127\.0\.0\.1:1\/goalrun: cannot connect \(.+\); fix: start PostgreSQL/,
      ),
      expect.stringMatching(/^missing {2}OPENAI_API_KEY: not set.*; fix: export OPENAI_API_KEY=/),
      expect.stringMatching(/^missing {2}ANTHROPIC_API_KEY: not set.*; fix: export ANTHROPIC_API_KEY=/),
      expect.stringMatching(/^ok {7}openai-compatible key: OPENAI_COMPATIBLE_API_KEY not set/),
    ]);
    expect(lines.join('\n')).not.toContain('hunter2-secret');
    expect(checks.filter((check) => check.required).map((check) => check.name)).toEqual([
      'bubblewrap',
      'database',
    ]);
  });

  it('does not require bubblewrap when goals run with the sandbox off', async () => {
    const [bubblewrap] = await runDoctorChecks({
      env: { PATH: '/nonexistent' },
      home,
      describeStore: 'embedded',
      sandboxMode: 'off',
      findTemporalBinary: () => null,
    });
    expect(bubblewrap).toMatchObject({ ok: false, required: false });
  });
});

describe('goalrun doctor', () => {
  // The built CLI as a subprocess: the command loads its extension checks lazily from dist.
  it('prints the lines and exits 0 when nothing required is missing, 1 otherwise', async () => {
    const ready = await runCli(
      ['doctor'],
      cliEnv({ GOALRUN_HOME: home, DATABASE_URL: inject('databaseUrl') }),
    );
    expect(ready.code, ready.stderr).toBe(0);
    expect(ready.stdout).toMatch(/^ok {7}bubblewrap: /m);
    expect(ready.stdout).toMatch(/^(ok {7}|missing {2})temporal CLI: /m);
    const broken = await runCli(
      ['doctor', '--json'],
      cliEnv({ GOALRUN_HOME: home, DATABASE_URL: 'postgres://u:p@127.0.0.1:1/db' }),
    );
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain('"name": "database"');
  });
});
