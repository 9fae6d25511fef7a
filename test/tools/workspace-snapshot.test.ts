import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeSnapshots } from '../../activities/snapshot-cleanup';
import { snapshotRef, snapshotWorkspace } from '../../activities/workspace-snapshot';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'snapshot-test-'));
  dirs.push(dir);
  return dir;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, stdio: 'pipe' }).toString().trim();
}

function repo(): string {
  const dir = tempDir();
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'tracked.txt'), 'v0\n');
  writeFileSync(path.join(dir, '.gitignore'), 'ignored.log\n');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'first');
  return dir;
}

describe('workspace snapshots', () => {
  it('records untracked and changed files, honours .gitignore, and leaves HEAD, branch and index alone', async () => {
    const dir = repo();
    const head = git(dir, 'rev-parse', 'HEAD');
    const index = readFileSync(path.join(dir, '.git', 'index'));
    writeFileSync(path.join(dir, 'tracked.txt'), 'v1\n');
    writeFileSync(path.join(dir, 'new.txt'), 'untracked\n');
    writeFileSync(path.join(dir, 'ignored.log'), 'noise\n');
    const result = await snapshotWorkspace({ sessionId: 's1', workspace: dir, step: 1 });
    expect(result).toMatchObject({ taken: true, reused: false });
    const ref = snapshotRef('s1', 1);
    expect(git(dir, 'show', `${ref}:tracked.txt`)).toBe('v1');
    expect(git(dir, 'show', `${ref}:new.txt`)).toBe('untracked');
    expect(git(dir, 'ls-tree', '--name-only', ref)).not.toContain('ignored.log');
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(dir, 'symbolic-ref', 'HEAD')).toBe('refs/heads/main');
    expect(readFileSync(path.join(dir, '.git', 'index')).equals(index)).toBe(true);
    expect(git(dir, 'status', '--porcelain')).toBe('M tracked.txt\n?? new.txt');
    expect(git(dir, 'stash', 'list')).toBe('');
  });

  it('sees a same-size edit made within the second of the last git add (racy git)', async () => {
    const dir = repo();
    git(dir, 'config', 'core.trustctime', 'false');
    const tracked = path.join(dir, 'tracked.txt');
    const second = Math.floor(Date.now() / 1000) - 100;
    utimesSync(tracked, second + 0.1, second + 0.1);
    git(dir, 'add', 'tracked.txt');
    utimesSync(path.join(dir, '.git', 'index'), second + 0.5, second + 0.5);
    writeFileSync(tracked, 'v1\n');
    utimesSync(tracked, second + 0.1, second + 0.1);
    await snapshotWorkspace({ sessionId: 'racy', workspace: dir, step: 1 });
    expect(git(dir, 'show', `${snapshotRef('racy', 1)}:tracked.txt`)).toBe('v1');
  });

  it('reuses the previous commit for an unchanged tree, and chains changed ones', async () => {
    const dir = repo();
    const first = await snapshotWorkspace({ sessionId: 's2', workspace: dir, step: 1 });
    const same = await snapshotWorkspace({ sessionId: 's2', workspace: dir, step: 2 });
    expect(same).toMatchObject({ taken: true, reused: true });
    if (!first.taken || !same.taken) throw new Error('no snapshot');
    expect(same.commit).toBe(first.commit);
    writeFileSync(path.join(dir, 'tracked.txt'), 'v2\n');
    const changed = await snapshotWorkspace({ sessionId: 's2', workspace: dir, step: 3 });
    if (!changed.taken) throw new Error('no snapshot');
    expect(changed.reused).toBe(false);
    expect(git(dir, 'rev-parse', `${changed.commit}^`)).toBe(first.commit);
  });

  it('takes none in a folder that is not a repository', async () => {
    const dir = tempDir();
    expect(await snapshotWorkspace({ sessionId: 's3', workspace: dir, step: 1 })).toEqual({
      taken: false,
      reason: 'the workspace is not a git repository',
    });
  });

  it('deletes every snapshot ref of a session, and only those (what clean does)', async () => {
    const dir = repo();
    await snapshotWorkspace({ sessionId: 'gone', workspace: dir, step: 1 });
    await snapshotWorkspace({ sessionId: 'gone', workspace: dir, step: 2 });
    await snapshotWorkspace({ sessionId: 'kept', workspace: dir, step: 1 });
    expect(await removeSnapshots(dir, ['gone'])).toMatchObject({ refs: 2 });
    expect(git(dir, 'for-each-ref', '--format=%(refname)', 'refs/goalrun/')).toBe('refs/goalrun/kept/1');
    expect(git(dir, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
  });
});
