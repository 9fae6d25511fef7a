/**
 * The git side of `goalrun fork` (issue 24): the step's snapshot is checked out into a new worktree by
 * git in a sandbox of its own, so a `post-checkout` hook or an fsmonitor in the repository's config
 * (planted under `--sandbox off`, or the user's own) never runs on the host; a failed checkout leaves
 * nothing behind. Real bubblewrap, real git.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  addSnapshotWorktree,
  findSnapshot,
  removeSnapshotWorktree,
  setSnapshotRef,
} from '../../activities/snapshot-worktree';
import { snapshotRef, snapshotWorkspace } from '../../activities/workspace-snapshot';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'snapshot-worktree-'));
  dirs.push(dir);
  return dir;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'core.fsmonitor=', '-c', 'core.hooksPath=/dev/null', ...args], {
    cwd,
    stdio: 'pipe',
  })
    .toString()
    .trim();
}

describe("fork's worktree", () => {
  it('checks the snapshot out with no hook and no fsmonitor, and sets the fork ref', async () => {
    const dir = tempDir();
    git(dir, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(dir, 'a.txt'), 'committed\n');
    git(dir, 'add', '.');
    git(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'first');
    writeFileSync(path.join(dir, 'a.txt'), 'at step 1\n');
    const taken = await snapshotWorkspace({ sessionId: 'p', workspace: dir, step: 1 });
    if (!taken.taken) throw new Error(taken.reason);

    const marker = path.join(tempDir(), 'ran');
    const script = path.join(dir, 'planted.sh');
    writeFileSync(script, `#!/bin/sh\nenv >> ${marker}\n`);
    chmodSync(script, 0o755);
    git(dir, 'config', 'core.fsmonitor', script);
    writeFileSync(path.join(dir, '.git', 'hooks', 'post-checkout'), `#!/bin/sh\n${script}\n`);
    chmodSync(path.join(dir, '.git', 'hooks', 'post-checkout'), 0o755);

    const found = await findSnapshot(dir, snapshotRef('p', 1));
    if (found.kind !== 'found') throw new Error(`no snapshot: ${JSON.stringify(found)}`);
    expect(found.commit).toBe(taken.commit);
    const tree = path.join(tempDir(), 'fork');
    await addSnapshotWorktree(found.layout, found.commit, tree);
    expect(readFileSync(path.join(tree, 'a.txt'), 'utf8')).toBe('at step 1\n');
    expect(existsSync(marker)).toBe(false);
    await setSnapshotRef(found.layout, snapshotRef('f', 1), found.commit);
    expect(git(dir, 'rev-parse', snapshotRef('f', 1))).toBe(found.commit);

    // Undone: the directory and git's record of it.
    await removeSnapshotWorktree(found.layout, tree);
    expect(existsSync(tree)).toBe(false);
    expect(git(dir, 'worktree', 'list').split('\n')).toHaveLength(1);
    // A commit that is not there fails, and leaves nothing behind either.
    const missing = path.join(tempDir(), 'missing');
    await expect(addSnapshotWorktree(found.layout, 'f'.repeat(40), missing)).rejects.toThrow(/worktree/);
    expect(existsSync(missing)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    expect(await findSnapshot(dir, snapshotRef('p', 9))).toMatchObject({ kind: 'missing' });
    expect(await findSnapshot(tempDir(), snapshotRef('p', 1))).toMatchObject({
      kind: 'none',
      why: expect.stringMatching(/is not a git repository/),
    });
  });
});
