/**
 * `--worktree` (issue 28 §4): a goal in a git worktree of its own, on a branch `goalrun/<name>`, so
 * two goals in one repository never touch each other's files. The repository may hold what an earlier
 * goal's model wrote, so its pointer files are checked first and git runs by the rule of
 * git/safe-git.ts (no hook, no fsmonitor, in a sandbox where only what git must write is writable).
 * `goalrun clean` removes the worktree with its session unless the branch holds work found nowhere
 * else: commits on no other branch, or changes not committed.
 */
import { mkdirSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { GoalWorktree } from '../core/goal';
import { findRepository, type RepositoryLayout } from './git/repository-layout';
import { runGit, tryGit, withGit } from './git/safe-git';
import { defaultSandboxHost, type SandboxHost } from './sandbox/host';

/** The prefix of every goal branch. */
export const GOAL_BRANCH_PREFIX = 'goalrun/';

/** A branch name from a goal's name or short id: what git accepts in one path component. */
export function goalBranchName(label: string): string {
  const slug = label
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/^[-.]+|[-.]+$/g, '')
    .replace(/\.lock$/i, '');
  return `${GOAL_BRANCH_PREFIX}${slug || 'goal'}`;
}

/** Why a workspace cannot get a worktree, or its repository. */
export function repositoryForWorktree(workspace: string): { layout: RepositoryLayout } | { error: string } {
  const found = findRepository(workspace);
  if (found.kind === 'none')
    return {
      error: `--worktree needs a git repository: ${workspace} is not in one (git init, and commit once)`,
    };
  if (found.kind === 'refused')
    return { error: `git is not run on the repository at ${found.top}: ${found.reason}` };
  return { layout: found.layout };
}

/**
 * Makes a new worktree at `dir` on a new branch from the repository's HEAD, and says where the goal's
 * workspace is in it (the same place relative to the top as the given workspace). Nothing is left
 * when it fails.
 */
export async function addGoalWorktree(
  workspace: string,
  branch: string,
  dir: string,
  host: SandboxHost = defaultSandboxHost(),
): Promise<{ worktree: GoalWorktree; workspace: string; gitWritable: string[] }> {
  const repository = repositoryForWorktree(workspace);
  if ('error' in repository) throw new Error(repository.error);
  const { layout } = repository;
  const head = await withGit(layout, [], host, (job) =>
    tryGit(job, ['rev-parse', '-q', '--verify', 'HEAD^{commit}']),
  );
  if (!head?.trim()) throw new Error(`--worktree needs a commit to start from: ${layout.top} has none yet`);
  const taken = await withGit(layout, [], host, (job) =>
    tryGit(job, ['rev-parse', '-q', '--verify', `refs/heads/${branch}`]),
  );
  if (taken?.trim())
    throw new Error(`the branch ${branch} exists already in ${layout.top}: give the goal another --name`);
  if (readdirSafe(dir).length > 0) throw new Error(`${dir} already exists and is not empty`);
  mkdirSync(dir, { recursive: true });
  const records = path.join(layout.commonDir, 'worktrees');
  mkdirSync(records, { recursive: true });
  try {
    await withGit(layout, [dir, records, path.join(layout.commonDir, 'refs')], host, (job) =>
      runGit(job, ['worktree', 'add', '-b', branch, dir, head.trim()]),
    );
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const inside = path.relative(layout.top, path.resolve(workspace));
  return {
    worktree: { path: dir, branch, repository: layout.top, project: realpathSync(path.resolve(workspace)) },
    workspace: inside ? path.join(dir, inside) : dir,
    gitWritable: commitPaths(layout, dir, branch),
  };
}

/**
 * What the goal's sandbox must also make writable for the model to commit on its branch: the shared
 * objects, the `goalrun/` branches' directory (and their logs), and the worktree's own git directory.
 * Hooks, config, `commondir` and the alternates stay read-only (sandbox/git-protection.ts).
 */
function commitPaths(layout: RepositoryLayout, dir: string, branch: string): string[] {
  const own = findRepository(dir);
  const branchDir = path.dirname(path.join(layout.commonDir, 'refs', 'heads', branch));
  const logsDir = path.dirname(path.join(layout.commonDir, 'logs', 'refs', 'heads', branch));
  mkdirSync(logsDir, { recursive: true });
  const paths = [path.join(layout.commonDir, 'objects'), branchDir, logsDir];
  if (own.kind === 'found') paths.push(own.layout.gitDir);
  return paths;
}

/** Why a goal's worktree must be kept (work found nowhere else), or null when it may go. */
export async function worktreeKeepReason(
  worktree: GoalWorktree,
  host: SandboxHost = defaultSandboxHost(),
): Promise<string | null> {
  const main = findRepository(worktree.repository);
  if (main.kind !== 'found') return null;
  const own = await withGit(main.layout, [], host, (job) =>
    tryGit(job, [
      'rev-list',
      '--count',
      `refs/heads/${worktree.branch}`,
      '--not',
      `--exclude=${worktree.branch}`,
      '--branches',
    ]),
  );
  const count = Number(own?.trim() ?? '0');
  if (count > 0)
    return `${worktree.branch} has ${count} commit${count === 1 ? '' : 's'} on no other branch (merge it, or git branch -D it and remove ${worktree.path})`;
  const here = findRepository(worktree.path);
  if (here.kind !== 'found') return null;
  const changes = await withGit(here.layout, [], host, (job) =>
    tryGit(job, ['status', '--porcelain', '--untracked-files=normal']),
  );
  if (changes?.trim())
    return `${worktree.path} has changes not committed (${changes.trim().split('\n').length} file${changes.trim().split('\n').length === 1 ? '' : 's'})`;
  return null;
}

/** Removes a goal's worktree, git's record of it, and its branch. */
export async function removeGoalWorktree(
  worktree: GoalWorktree,
  host: SandboxHost = defaultSandboxHost(),
): Promise<void> {
  rmSync(worktree.path, { recursive: true, force: true });
  const main = findRepository(worktree.repository);
  if (main.kind !== 'found') return;
  await withGit(main.layout, [main.layout.commonDir], host, async (job) => {
    await tryGit(job, ['worktree', 'prune']);
    await tryGit(job, ['branch', '-D', worktree.branch]);
  });
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
