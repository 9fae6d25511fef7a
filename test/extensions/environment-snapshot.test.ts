/**
 * The environment snapshot of a goal's first message: a folder with no `.git` at or above it is
 * "not a git repository" without a process started; a repository's `git status` is run in the
 * sandbox (the host here runs it without bubblewrap, as a machine without it does).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { environmentSnapshot } from '../../activities/extensions/environment-snapshot';
import type { SandboxHost } from '../../activities/sandbox/host';
import { NOT_A_GIT_REPOSITORY } from '../../core/extensions/workspace-context';
import { DEFAULT_SANDBOX } from '../../core/sandbox-settings';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-env-snapshot-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function host(stateDir: string, pathDirs = process.env.PATH ?? ''): SandboxHost {
  return {
    bwrapPath: null,
    hostEnv: { PATH: pathDirs },
    homes: [],
    goalrunHome: path.join(root, 'home'),
    installDir: path.join(root, 'install'),
    stateDir,
  };
}

describe('environmentSnapshot', () => {
  it('says a plain folder is no git repository without starting anything', async () => {
    const workspace = fs.mkdtempSync(path.join(root, 'plain-'));
    // A `git` first on the PATH that leaves a mark when anything starts it.
    const bin = fs.mkdtempSync(path.join(root, 'bin-'));
    const mark = path.join(root, 'git-was-started');
    fs.writeFileSync(path.join(bin, 'git'), `#!/bin/sh\ntouch '${mark}'\nexit 128\n`, { mode: 0o755 });
    const snapshot = await environmentSnapshot({
      workspace,
      sessionId: 'plain',
      sandbox: { ...DEFAULT_SANDBOX, mode: 'off' },
      host: host(path.join(root, 'state'), `${bin}:${process.env.PATH ?? ''}`),
      now: new Date('2026-12-03T12:00:00Z'),
    });
    expect(snapshot.git).toBe(NOT_A_GIT_REPOSITORY);
    expect(snapshot.workingDirectory).toBe(workspace);
    expect(fs.existsSync(mark)).toBe(false);
  });

  it("runs git status in a repository's workspace", async () => {
    const repo = fs.mkdtempSync(path.join(root, 'repo-'));
    execFileSync('git', ['init', '-q', repo]);
    const workspace = path.join(repo, 'service');
    fs.mkdirSync(workspace);
    fs.writeFileSync(path.join(workspace, 'new.txt'), 'new\n');
    const snapshot = await environmentSnapshot({
      workspace,
      sessionId: 'repo',
      sandbox: { ...DEFAULT_SANDBOX, mode: 'off' },
      host: host(path.join(root, 'state')),
      now: new Date('2026-12-03T12:00:00Z'),
    });
    expect(snapshot.git).toMatch(/## No commits yet/);
    expect(snapshot.git).toContain('?? ./');
  });
});
