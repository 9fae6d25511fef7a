/**
 * A model that tries to plant code the user's next git command runs outside the sandbox: a
 * pre-commit hook (by bash and by file-write), `core.fsmonitor` and `core.hooksPath` by
 * `git config`, a swapped `.git`. Real bubblewrap, real git; ordinary commits still work.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../activities/tools/bash';
import { fileEditTool } from '../../activities/tools/file-edit';
import { fileWriteTool } from '../../activities/tools/file-write';
import type { ToolContext } from '../../activities/tools/types';
import { DEFAULT_SANDBOX } from '../../core/sandbox-settings';
import { makeContext, makeWorkspace, removeWorkspace } from '../tools/helpers';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8', env: GIT_ENV });
}

/** A repository with one commit and an identity in its own config (the sandbox hides $HOME). */
function makeRepo(dir: string): void {
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'sandboxed');
  git(dir, 'config', 'user.email', 'sandboxed@example.com');
  writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'first');
}

const bash = (command: string, context: ToolContext) => bashTool.run({ command }, context);

let workspace: string;
let other: string;
beforeEach(async () => {
  workspace = await makeWorkspace();
  other = await makeWorkspace();
});
afterEach(async () => {
  await removeWorkspace(workspace);
  await removeWorkspace(other);
});

describe('.git protection in the sandbox', () => {
  it('keeps git add and git commit working', async () => {
    makeRepo(workspace);
    const outcome = await bash(
      'echo b > b.txt && git add b.txt && git commit -q -m second && git log --oneline | wc -l',
      makeContext(workspace),
    );
    expect(outcome.output).toContain('2\n');
    expect(outcome.ok).toBe(true);
    expect(git(workspace, 'log', '--format=%s', '-1').trim()).toBe('second');
  });

  it('refuses a pre-commit hook planted by bash, core.fsmonitor and core.hooksPath by git config, and a swapped .git', async () => {
    makeRepo(workspace);
    const context = makeContext(workspace);
    const hook = await bash(
      "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
      context,
    );
    expect(hook.ok).toBe(false);
    expect(hook.output).toMatch(/Read-only file system/);
    expect(existsSync(path.join(workspace, '.git/hooks/pre-commit'))).toBe(false);

    const fsmonitor = await bash('git config core.fsmonitor "touch /tmp/pwned"', context);
    expect(fsmonitor.ok).toBe(false);
    expect(fsmonitor.output).toMatch(
      /could not lock config file|Read-only file system|Device or resource busy/,
    );
    const hooksPath = await bash('git config core.hooksPath myhooks', context);
    expect(hooksPath.ok).toBe(false);
    expect(git(workspace, 'config', '--list', '--local')).not.toMatch(/fsmonitor|hookspath/i);

    const swap = await bash('mv .git .git-old', context);
    expect(swap.ok).toBe(false);
    expect(swap.output).toMatch(/busy/i);
    const replaceConfig = await bash(
      'echo "[core]" > .git/config.new && mv .git/config.new .git/config',
      context,
    );
    expect(replaceConfig.ok).toBe(false);
    expect(readFileSync(path.join(workspace, '.git/config'), 'utf8')).toContain('sandboxed@example.com');
  });

  it('makes a missing hooks directory before the sandbox starts, so that it cannot be made inside', async () => {
    makeRepo(workspace);
    execFileSync('rm', ['-rf', path.join(workspace, '.git/hooks')]);
    const outcome = await bash(
      'mkdir -p .git/hooks && echo x > .git/hooks/post-checkout',
      makeContext(workspace),
    );
    expect(outcome.ok).toBe(false);
    expect(existsSync(path.join(workspace, '.git/hooks/post-checkout'))).toBe(false);
  });

  it('protects a repository right below the workspace (a folder of checkouts) too', async () => {
    const nested = path.join(workspace, 'checkout');
    execFileSync('mkdir', [nested]);
    makeRepo(nested);
    const context = makeContext(workspace);
    const hook = await bash('echo x > checkout/.git/hooks/pre-commit', context);
    expect(hook.ok).toBe(false);
    expect(hook.output).toMatch(/Read-only file system/);
    const commit = await bash(
      'cd checkout && echo c > c.txt && git add c.txt && git commit -q -m nested',
      context,
    );
    expect(commit.ok).toBe(true);
    const write = await fileWriteTool.run({ path: 'checkout/.git/config', content: '[core]\n' }, context);
    expect(write.output).toMatch(/^protected git path: file-write cannot write checkout\/\.git\/config/);
  });

  it('keeps a core.hooksPath directory inside the workspace read-only', async () => {
    makeRepo(workspace);
    git(workspace, 'config', 'core.hooksPath', 'tools/hooks');
    const outcome = await bash(
      'mkdir -p tools/hooks; echo x > tools/hooks/pre-commit',
      makeContext(workspace),
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(/Read-only file system/);
    const write = await fileWriteTool.run(
      { path: 'tools/hooks/pre-push', content: '#!/bin/sh\n' },
      makeContext(workspace),
    );
    expect(write.ok).toBe(false);
    expect(write.output).toMatch(/^protected git path: file-write cannot write tools\/hooks\/pre-push/);
  });

  it('protects a linked worktree: its .git file, and the hooks and config of the repository it names', async () => {
    makeRepo(other);
    const tree = path.join(workspace, 'wt');
    git(other, 'worktree', 'add', '-q', tree, '-b', 'feature');
    // The main repository is a writable root too, so that commits in the worktree can write objects.
    const context = makeContext(tree, { sandbox: { ...DEFAULT_SANDBOX, writableRoots: [other] } });
    const commit = await bash('echo c > c.txt && git add c.txt && git commit -q -m in-worktree', context);
    expect(commit.output).not.toMatch(/fatal|error/);
    expect(commit.ok).toBe(true);
    const hook = await bash(`echo x > ${other}/.git/hooks/pre-commit`, context);
    expect(hook.ok).toBe(false);
    const gitfile = await bash('echo "gitdir: /tmp/evil" > .git', context);
    expect(gitfile.ok).toBe(false);
    const config = await bash('git config core.fsmonitor evil', context);
    expect(config.ok).toBe(false);
    const write = await fileWriteTool.run({ path: '.git', content: 'gitdir: /tmp/evil\n' }, context);
    expect(write.output).toMatch(/^protected git path/);
    const hookWrite = await fileWriteTool.run(
      { path: path.join(other, '.git/hooks/pre-commit'), content: '#!/bin/sh\n' },
      context,
    );
    expect(hookWrite.output).toMatch(/^protected git path/);
  });
});

describe('the files that say where a repository is', () => {
  it('are read-only in the sandbox, made first where missing, and git still works', async () => {
    makeRepo(workspace);
    const tree = path.join(other, 'wt');
    git(workspace, 'worktree', 'add', '-q', tree, '-b', 'side');
    rmSync(path.join(workspace, '.git/info'), { recursive: true, force: true });
    rmSync(path.join(workspace, '.git/objects/info'), { recursive: true, force: true });
    const context = makeContext(workspace);
    const attempts = {
      alternates: 'echo /tmp/elsewhere/objects > .git/objects/info/alternates',
      removeAlternates: 'rm -f .git/objects/info/alternates',
      info: 'mkdir -p .git/info && echo "$(git rev-parse HEAD)" > .git/info/grafts',
      worktreeCommondir: 'echo ../../../.x > .git/worktrees/wt/commondir',
      worktreeGitdir: 'echo /tmp/x/.git > .git/worktrees/wt/gitdir',
    };
    for (const [name, command] of Object.entries(attempts)) {
      const outcome = await bash(command, context);
      expect(outcome.ok, `${name}: ${outcome.output}`).toBe(false);
      expect(outcome.output, name).toMatch(/Read-only file system|busy/i);
    }
    // Made before the sandbox started, as git makes them: an empty alternates file, an info directory.
    expect(readFileSync(path.join(workspace, '.git/objects/info/alternates'), 'utf8')).toBe('');
    expect(readdirSync(path.join(workspace, '.git/info'))).toEqual([]);
    expect(readFileSync(path.join(workspace, '.git/worktrees/wt/commondir'), 'utf8')).toBe('../..\n');
    // The file tools refuse them by name, and a main repository's commondir, which cannot be mounted.
    for (const file of ['.git/commondir', '.git/info/exclude', '.git/objects/info/alternates']) {
      const write = await fileWriteTool.run({ path: file, content: '/elsewhere\n' }, context);
      expect(write.output, file).toMatch(/^protected git path/);
    }
    expect(existsSync(path.join(workspace, '.git/commondir'))).toBe(false);
    // git goes on working on both sides, in the sandbox and on the host.
    const commit = await bash(
      'echo b > b.txt && git add b.txt && git commit -q -m second && echo ok',
      context,
    );
    expect(commit.output).toMatch(/ok/);
    expect(git(tree, 'status', '--short')).toBe('');
    expect(git(workspace, 'log', '--format=%s', '-1').trim()).toBe('second');
  });
});

describe('.git protection in the file tools', () => {
  it('refuses file-write of a hook and file-edit of .git/config with a clear error', async () => {
    makeRepo(workspace);
    const context = makeContext(workspace);
    const write = await fileWriteTool.run(
      { path: '.git/hooks/pre-commit', content: '#!/bin/sh\ntouch /tmp/pwned\n' },
      context,
    );
    expect(write.ok).toBe(false);
    expect(write.output).toMatch(/^protected git path: file-write cannot write \.git\/hooks\/pre-commit; /);
    expect(existsSync(path.join(workspace, '.git/hooks/pre-commit'))).toBe(false);
    const edit = await fileEditTool.run(
      { path: '.git/config', old_string: '[core]', new_string: '[core]\n\tfsmonitor = touch /tmp/pwned' },
      context,
    );
    expect(edit.ok).toBe(false);
    expect(edit.output).toMatch(/^protected git path: file-edit cannot write \.git\/config/);
    // Through a symlink made in the workspace, too.
    await bash('ln -s .git/hooks h', context);
    const viaLink = await fileWriteTool.run({ path: 'h/pre-push', content: 'x' }, context);
    expect(viaLink.output).toMatch(/^protected git path/);
    // info/ (exclude, grafts, attributes) is git's own too.
    const exclude = await fileWriteTool.run({ path: '.git/info/exclude', content: 'dist\n' }, context);
    expect(exclude.output).toMatch(/^protected git path: file-write cannot write \.git\/info\/exclude/);
    // The rest of .git and the workspace stay writable.
    const ordinary = await fileWriteTool.run({ path: '.git/description', content: 'mine\n' }, context);
    expect(ordinary.ok).toBe(true);
  });
});
