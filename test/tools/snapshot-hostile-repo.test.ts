/**
 * Snapshots of a repository the model could write (issue 24): a `commondir` that sends git to a config
 * with an fsmonitor, alternates outside the repository, a repository other than the goal's, a config
 * whose hook, fsmonitor and filter would run with the worker's environment, files over the size cap, a
 * nested repository without commits; and clean removing only what its snapshots held. Real
 * bubblewrap and real git, in the sandbox and (`--sandbox off`) on the host by the safe rule.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findRepository } from '../../activities/git/repository-layout';
import { sandboxHostFromEnv } from '../../activities/sandbox/host';
import { removeSnapshots } from '../../activities/snapshot-cleanup';
import { addSnapshotWorktree, findSnapshot } from '../../activities/snapshot-worktree';
import { snapshotRef, snapshotWorkspace, workspaceRepository } from '../../activities/workspace-snapshot';
import type { SandboxMode } from '../../core/sandbox-settings';

const SECRET = 'sk-planted-secret-of-the-worker';
const DATABASE = 'postgres://root:hunter2@127.0.0.1/secret-db';
const saved = { key: process.env.OPENAI_API_KEY, db: process.env.DATABASE_URL };
beforeAll(() => {
  process.env.OPENAI_API_KEY = SECRET;
  process.env.DATABASE_URL = DATABASE;
});
afterAll(() => {
  for (const [name, value] of [
    ['OPENAI_API_KEY', saved.key],
    ['DATABASE_URL', saved.db],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'snapshot-hostile-'));
  dirs.push(dir);
  return dir;
}

/** The test's own git: never the fsmonitor or the hooks a test planted. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'core.fsmonitor=', '-c', 'core.hooksPath=/dev/null', ...args], {
    cwd,
    stdio: 'pipe',
  })
    .toString()
    .trim();
}

function repo(): string {
  const dir = tempDir();
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'tracked.txt'), 'v0\n');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'first');
  return dir;
}

/** A script that writes its environment to a marker outside the workspace, as a planted one would. */
function plantedScript(): { script: string; marker: string } {
  const outside = tempDir();
  const marker = path.join(outside, 'ran');
  const script = path.join(outside, 'planted.sh');
  writeFileSync(script, `#!/bin/sh\nenv >> ${marker}\n`);
  chmodSync(script, 0o755);
  return { script, marker };
}

/** Ages a loose object (git keeps objects changed in the last hour from a clean's prune). */
function age(dir: string, id: string): void {
  const file = path.join(dir, '.git', 'objects', id.slice(0, 2), id.slice(2));
  const hoursAgo = Date.now() / 1000 - 2 * 3600;
  utimesSync(file, hoursAgo, hoursAgo);
}

const MODES: Array<SandboxMode | undefined> = [undefined, 'off'];

describe('a snapshot of a repository the model could write', () => {
  it.each(MODES)(
    'refuses a commondir that leads to a config with an fsmonitor (sandbox %s)',
    async (mode) => {
      const dir = repo();
      const { script, marker } = plantedScript();
      // What the model does in one bash call: its own copy of the repository, with a config of its own.
      mkdirSync(path.join(dir, '.x'));
      for (const part of ['objects', 'refs', 'HEAD']) {
        execFileSync('cp', ['-r', path.join(dir, '.git', part), path.join(dir, '.x', part)]);
      }
      writeFileSync(
        path.join(dir, '.x', 'config'),
        `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = ${script}\n`,
      );
      writeFileSync(path.join(dir, '.git', 'commondir'), '../.x\n');
      // The attack is real: a plain git on the host runs the script.
      execFileSync('git', ['status', '--short'], { cwd: dir, stdio: 'pipe' });
      expect(existsSync(marker)).toBe(true);
      rmSync(marker);

      const result = await snapshotWorkspace({ sessionId: 's', workspace: dir, step: 1, sandboxMode: mode });
      expect(result).toMatchObject({ taken: false, refused: true });
      expect(result.taken ? '' : result.reason).toMatch(/commondir points git at \.\.\/\.x/);
      expect(existsSync(marker)).toBe(false);
      expect(workspaceRepository(dir)).toMatchObject({
        repository: null,
        refused: expect.stringMatching(/commondir/),
      });
      // A fork or a clean of that repository runs no git on it either.
      expect(await removeSnapshots(dir, ['s'])).toEqual({ refs: 0, objects: 0 });
      expect(existsSync(marker)).toBe(false);
    },
  );

  it('refuses alternates outside the repository, and a linked worktree whose commondir was rewritten', async () => {
    const dir = repo();
    const other = repo();
    writeFileSync(path.join(dir, '.git', 'objects', 'info', 'alternates'), `${other}/.git/objects\n`);
    const result = await snapshotWorkspace({ sessionId: 's', workspace: dir, step: 1 });
    expect(result).toMatchObject({ taken: false, refused: true });
    expect(result.taken ? '' : result.reason).toMatch(
      /alternates borrows objects from .*outside the repository/,
    );
    // An empty alternates file (what the sandbox makes) is no alternate at all.
    writeFileSync(path.join(dir, '.git', 'objects', 'info', 'alternates'), '');
    expect(await snapshotWorkspace({ sessionId: 's', workspace: dir, step: 1 })).toMatchObject({
      taken: true,
    });

    const tree = path.join(tempDir(), 'wt');
    git(dir, 'worktree', 'add', '-q', '--detach', tree);
    expect(findRepository(tree)).toMatchObject({ kind: 'found' });
    expect(await snapshotWorkspace({ sessionId: 'w', workspace: tree, step: 1 })).toMatchObject({
      taken: true,
    });
    writeFileSync(path.join(dir, '.git', 'worktrees', 'wt', 'commondir'), `${other}/.git\n`);
    expect(await snapshotWorkspace({ sessionId: 'w', workspace: tree, step: 2 })).toMatchObject({
      taken: false,
      refused: true,
    });
  });

  it.each(MODES)(
    'runs no hook and no fsmonitor, and gives a filter neither the key nor the database (sandbox %s)',
    async (mode) => {
      const dir = repo();
      const { script, marker } = plantedScript();
      git(dir, 'config', 'core.fsmonitor', script);
      const hooks = path.join(dir, '.git', 'hooks');
      for (const hook of ['reference-transaction', 'post-index-change', 'post-checkout']) {
        writeFileSync(path.join(hooks, hook), `#!/bin/sh\n${script}\n`);
        chmodSync(path.join(hooks, hook), 0o755);
      }
      // A clean filter's output is what the snapshot stores: here, the environment git gave it.
      git(dir, 'config', 'filter.leak.clean', 'env');
      writeFileSync(path.join(dir, '.gitattributes'), '*.env filter=leak\n');
      writeFileSync(path.join(dir, 'seen.env'), 'x\n');
      const result = await snapshotWorkspace({ sessionId: 'f', workspace: dir, step: 1, sandboxMode: mode });
      expect(result).toMatchObject({ taken: true, reused: false });
      expect(existsSync(marker)).toBe(false);
      const seen = git(dir, 'show', `${snapshotRef('f', 1)}:seen.env`);
      expect(seen).toMatch(/^PATH=/m);
      expect(seen).not.toContain(SECRET);
      expect(seen).not.toContain('hunter2');
      expect(seen).not.toMatch(/^(OPENAI_API_KEY|DATABASE_URL)=/m);
    },
  );

  it('snapshots only the repository the goal started in', async () => {
    const dir = repo();
    const workspace = path.join(dir, 'app');
    mkdirSync(workspace);
    const started = workspaceRepository(workspace).repository;
    expect(started?.top).toBe(dir);
    if (!started) throw new Error('no repository');
    expect(
      await snapshotWorkspace({ sessionId: 'b', workspace, step: 1, repository: started }),
    ).toMatchObject({ taken: true });
    // The model runs `git init` in its workspace: a repository of its own, inside the user's.
    git(workspace, 'init', '-q');
    const result = await snapshotWorkspace({ sessionId: 'b', workspace, step: 2, repository: started });
    expect(result).toMatchObject({ taken: false, refused: true });
    expect(result.taken ? '' : result.reason).toMatch(/made during a goal is never snapshotted/);
    expect(workspaceRepository(tempDir())).toEqual({ repository: null });
  });
});

describe('what a snapshot keeps', () => {
  it('leaves out files over the cap and untracked repositories, and counts the bytes it added', async () => {
    const dir = repo();
    const MiB = 1024 * 1024;
    writeFileSync(path.join(dir, 'small.bin'), Buffer.alloc(1000, 1));
    git(dir, 'add', 'small.bin');
    git(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'small');
    // A tracked file grown over the cap keeps its committed content; an untracked one is left out.
    writeFileSync(path.join(dir, 'small.bin'), Buffer.alloc(2 * MiB, 2));
    writeFileSync(path.join(dir, 'big.iso'), Buffer.alloc(2 * MiB, 3));
    writeFileSync(path.join(dir, 'new.txt'), 'fresh content of this step\n');
    // A nested repository without a commit used to fail `git add -A` (and so the snapshot).
    git(dir, 'init', '-q', 'sub');
    writeFileSync(path.join(dir, 'sub', 'inner.txt'), 'inner\n');
    const first = await snapshotWorkspace({ sessionId: 'c', workspace: dir, step: 1, maxFileBytes: MiB });
    if (!first.taken) throw new Error(first.reason);
    expect(first.skipped).toEqual({ count: 2, names: expect.arrayContaining(['big.iso', 'small.bin']) });
    const names = git(dir, 'ls-tree', '-r', '--name-only', first.commit).split('\n');
    expect(names).toEqual(expect.arrayContaining(['new.txt', 'small.bin', 'tracked.txt']));
    expect(names).not.toContain('big.iso');
    expect(names.some((name) => name.startsWith('sub'))).toBe(false);
    expect(git(dir, 'cat-file', '-s', `${first.commit}:small.bin`)).toBe('1000');
    expect(first.addedBytes).toBeGreaterThan(0);
    expect(first.addedBytes).toBeLessThan(MiB);
    const again = await snapshotWorkspace({ sessionId: 'c', workspace: dir, step: 2, maxFileBytes: MiB });
    expect(again).toMatchObject({ taken: true, reused: true, addedBytes: 0 });
  });

  it('leaves the large files out of a change too big to name file by file', async () => {
    const dir = repo();
    mkdirSync(path.join(dir, 'many'));
    for (let i = 0; i < 1100; i++) writeFileSync(path.join(dir, 'many', `f${i}.txt`), `${i}\n`);
    writeFileSync(path.join(dir, 'many', 'big.bin'), Buffer.alloc(300_000, 7));
    git(dir, 'init', '-q', 'nested');
    const result = await snapshotWorkspace({
      sessionId: 'm',
      workspace: dir,
      step: 1,
      maxFileBytes: 100_000,
    });
    if (!result.taken) throw new Error(result.reason);
    const names = git(dir, 'ls-tree', '-r', '--name-only', result.commit).split('\n');
    expect(names.filter((name) => name.startsWith('many/f'))).toHaveLength(1100);
    expect(names).not.toContain('many/big.bin');
    expect(result.skipped).toEqual({ count: 1, names: ['many/big.bin'] });
  });
});

describe('a repository in a home the sandbox hides', () => {
  it('is snapshotted and forked all the same, with the rest of that home hidden from git', async () => {
    const home = tempDir();
    const dir = path.join(home, 'project');
    mkdirSync(dir);
    git(dir, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(dir, 'a.txt'), 'a\n');
    writeFileSync(path.join(home, 'secret.txt'), 'not for git\n');
    // A filter shows what git could read: the repository, not the home around it.
    git(dir, 'config', 'filter.peek.clean', `cat ${path.join(home, 'secret.txt')} 2>&1 || echo hidden`);
    writeFileSync(path.join(dir, '.gitattributes'), '*.peek filter=peek\n');
    writeFileSync(path.join(dir, 'x.peek'), 'x\n');
    const host = sandboxHostFromEnv({ ...process.env, HOME: home }, home);
    const result = await snapshotWorkspace({ sessionId: 'h', workspace: dir, step: 1 }, host);
    if (!result.taken) throw new Error(result.reason);
    expect(git(dir, 'show', `${result.commit}:a.txt`)).toBe('a');
    expect(git(dir, 'show', `${result.commit}:x.peek`)).toMatch(/hidden|No such file/);
    expect(git(dir, 'show', `${result.commit}:x.peek`)).not.toContain('not for git');
    const found = await findSnapshot(dir, snapshotRef('h', 1), host);
    if (found.kind !== 'found') throw new Error('no snapshot');
    const tree = path.join(home, 'project-fork');
    await addSnapshotWorktree(found.layout, found.commit, tree, host);
    expect(readFileSync(path.join(tree, 'a.txt'), 'utf8')).toBe('a\n');
  });
});

describe('clean', () => {
  it("removes the session's refs and the objects only its snapshots held, nothing of the user's", async () => {
    const dir = repo();
    writeFileSync(path.join(dir, 'only-in-snapshot.txt'), 'written by the goal\n');
    const taken = await snapshotWorkspace({ sessionId: 'old', workspace: dir, step: 1 });
    if (!taken.taken) throw new Error(taken.reason);
    const blob = git(dir, 'rev-parse', `${taken.commit}:only-in-snapshot.txt`);
    const tracked = git(dir, 'rev-parse', 'HEAD:tracked.txt');
    const dangling = execFileSync('git', ['hash-object', '-w', '--stdin'], {
      cwd: dir,
      input: 'the user dropped this\n',
    })
      .toString()
      .trim();
    for (const id of [blob, taken.tree, taken.commit, dangling]) age(dir, id);
    // Another session's fresh snapshot of other content: its refs stay, and so do its objects.
    writeFileSync(path.join(dir, 'only-in-snapshot.txt'), 'written by the other goal\n');
    const fresh = await snapshotWorkspace({ sessionId: 'fresh', workspace: dir, step: 1 });
    if (!fresh.taken) throw new Error(fresh.reason);

    expect(await removeSnapshots(dir, ['old'])).toEqual({ refs: 1, objects: 3 });
    expect(() => git(dir, 'cat-file', '-e', blob)).toThrow();
    expect(git(dir, 'cat-file', '-t', dangling)).toBe('blob');
    expect(git(dir, 'cat-file', '-t', tracked)).toBe('blob');
    expect(git(dir, 'for-each-ref', '--format=%(refname)', 'refs/goalrun/')).toBe(snapshotRef('fresh', 1));
    git(dir, 'fsck', '--no-dangling');
    // Within the grace, an unreachable snapshot object stays (a running goal may be about to use it).
    expect(await removeSnapshots(dir, ['fresh'])).toEqual({ refs: 1, objects: 0 });
    expect(git(dir, 'cat-file', '-t', fresh.commit)).toBe('commit');
    expect(readFileSync(path.join(dir, 'only-in-snapshot.txt'), 'utf8')).toBe('written by the other goal\n');
  });
});
