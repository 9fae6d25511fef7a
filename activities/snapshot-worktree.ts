/**
 * The git side of `goalrun fork` (issue 17 §3): a step's snapshot checked out into a new detached
 * worktree, and the fork's own snapshot ref. The repository is the parent goal's workspace, which its
 * model could write, so (issue 24) its pointer files are checked first and git runs by the rule of
 * git/safe-git.ts: in a sandbox where only the new worktree and the repository's `worktrees` directory
 * (or its refs, for the ref) are writable, with no hook and no fsmonitor (`post-checkout` never runs).
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { findRepository, type RepositoryLayout } from './git/repository-layout';
import { runGit, tryGit, withGit } from './git/safe-git';
import { defaultSandboxHost, type SandboxHost } from './sandbox/host';

/** Where a step's snapshot is: its commit in a checked repository, or why it cannot be used. */
export type SnapshotLookup =
  | { kind: 'found'; layout: RepositoryLayout; commit: string }
  | { kind: 'missing'; layout: RepositoryLayout }
  | { kind: 'none'; why: string };

/** The commit a ref names in the repository of a workspace, once the repository's files are checked. */
export async function findSnapshot(
  workspace: string,
  ref: string,
  host: SandboxHost = defaultSandboxHost(),
): Promise<SnapshotLookup> {
  const found = findRepository(workspace);
  if (found.kind === 'none') return { kind: 'none', why: `${workspace} is not a git repository` };
  if (found.kind === 'refused')
    return { kind: 'none', why: `git is not run on the repository at ${found.top}: ${found.reason}` };
  const { layout } = found;
  const commit = await withGit(layout, [], host, (job) =>
    tryGit(job, ['rev-parse', '-q', '--verify', `${ref}^{commit}`]),
  );
  return commit?.trim() ? { kind: 'found', layout, commit: commit.trim() } : { kind: 'missing', layout };
}

/**
 * Checks a commit out into a new detached worktree at `worktree` (which must not exist, or be an
 * empty directory). On failure nothing is left: the directory and git's record of it are removed.
 */
export async function addSnapshotWorktree(
  layout: RepositoryLayout,
  commit: string,
  worktree: string,
  host: SandboxHost = defaultSandboxHost(),
): Promise<void> {
  const made = makeEmptyDir(worktree);
  const records = path.join(layout.commonDir, 'worktrees');
  mkdirSync(records, { recursive: true });
  try {
    await withGit(layout, [worktree, records], host, (job) =>
      runGit(job, ['worktree', 'add', '--detach', worktree, commit]),
    );
  } catch (err) {
    if (made) await removeSnapshotWorktree(layout, worktree, host);
    throw err;
  }
}

/** A directory made for the worktree: true when this call made it, false when it was there and empty. */
function makeEmptyDir(dir: string): boolean {
  try {
    mkdirSync(dir);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      mkdirSync(dir, { recursive: true });
      return true;
    }
    if ((err as NodeJS.ErrnoException).code === 'EEXIST' && readdirSync(dir).length === 0) return false;
    throw new Error(`${dir} already exists and is not empty`);
  }
}

/** Removes a worktree this fork made, and git's record of it. */
export async function removeSnapshotWorktree(
  layout: RepositoryLayout,
  worktree: string,
  host: SandboxHost = defaultSandboxHost(),
): Promise<void> {
  rmSync(worktree, { recursive: true, force: true });
  const records = path.join(layout.commonDir, 'worktrees');
  await withGit(layout, [records], host, (job) => runGit(job, ['worktree', 'prune'])).catch(() => undefined);
}

/** Points a ref at a commit in a repository (the fork's first snapshot ref). */
export async function setSnapshotRef(
  layout: RepositoryLayout,
  ref: string,
  commit: string,
  host: SandboxHost = defaultSandboxHost(),
): Promise<void> {
  await withGit(layout, [path.join(layout.commonDir, 'refs')], host, (job) =>
    runGit(job, ['update-ref', ref, commit]),
  );
}
