/**
 * Per-step workspace snapshots (issue 17 §3): at the end of every step, when the workspace is a git
 * repository, the workspace's files (untracked ones and bash edits included, .gitignore honoured) are
 * recorded as a commit under `refs/goalrun/<session>/<step>`, made with plumbing only: a temporary
 * index, `git add -A`, `write-tree`, `commit-tree`, `update-ref`. The user's branches, index, stash
 * and HEAD are never written. An unchanged tree reuses the previous snapshot's commit (no new objects).
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The ref namespace of a session's snapshots (deleted with the session by `goalrun clean`). */
export function snapshotRefPrefix(sessionId: string): string {
  return `refs/goalrun/${sessionId}/`;
}

/** The ref of one step's snapshot. */
export function snapshotRef(sessionId: string, step: number): string {
  return `${snapshotRefPrefix(sessionId)}${step}`;
}

/** Input of the snapshot activity. */
export interface SnapshotInput {
  sessionId: string;
  workspace: string;
  step: number;
}

/** What a snapshot did: a commit (new or reused), or why none was taken. */
export type SnapshotResult =
  | { taken: true; commit: string; tree: string; reused: boolean }
  | { taken: false; reason: string };

/** Longest a git command of a snapshot may run before the snapshot is given up. */
export const SNAPSHOT_GIT_TIMEOUT_MS = 120_000;

/** Identity of snapshot commits (never the user's config: it may be missing, or sign commits). */
const SNAPSHOT_IDENTITY = {
  GIT_AUTHOR_NAME: 'goalrun',
  GIT_AUTHOR_EMAIL: 'goalrun@localhost',
  GIT_COMMITTER_NAME: 'goalrun',
  GIT_COMMITTER_EMAIL: 'goalrun@localhost',
};

/** Runs git in a directory; resolves with trimmed stdout. */
async function git(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const { stdout } = await run('git', ['-c', 'gc.auto=0', '-c', 'core.hooksPath=/dev/null', ...args], {
    cwd,
    env: { ...process.env, ...env, GIT_TERMINAL_PROMPT: '0' },
    timeout: SNAPSHOT_GIT_TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout.trim();
}

/** git output, or null when the command fails (a missing ref, not a repository). */
async function gitOrNull(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string | null> {
  try {
    return await git(cwd, args, env);
  } catch {
    return null;
  }
}

/** The top of the work tree a workspace is in, or null when it is not in a git work tree. */
export async function workTreeOf(workspace: string): Promise<string | null> {
  const inside = await gitOrNull(workspace, ['rev-parse', '--is-inside-work-tree']);
  if (inside !== 'true') return null;
  return gitOrNull(workspace, ['rev-parse', '--show-toplevel']);
}

/** The commit a ref names, or null. */
export async function resolveRef(cwd: string, ref: string): Promise<string | null> {
  return gitOrNull(cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
}

/** The newest snapshot at or before a step (a resumed or forked session may skip numbers). */
async function previousSnapshot(top: string, sessionId: string, step: number): Promise<string | null> {
  const listed = await gitOrNull(top, ['for-each-ref', '--format=%(refname)', snapshotRefPrefix(sessionId)]);
  if (!listed) return null;
  const steps = listed
    .split('\n')
    .map((ref) => Number(ref.slice(snapshotRefPrefix(sessionId).length)))
    .filter((n) => Number.isInteger(n) && n < step)
    .sort((a, b) => b - a);
  return steps.length > 0 ? resolveRef(top, snapshotRef(sessionId, steps[0])) : null;
}

/**
 * Git trusts an index entry's cached stat data only when the file is older than the index itself
 * ("racy git"). A plain copy is stamped now, so a file changed within the same second as the user's
 * last `git add`, at the same size, would look unchanged and its old content would be snapshotted.
 * The copy keeps the original's time, down to the whole second: entries racy in the user's index are
 * racy in the copy too, and no others (files of a fresh clone are not all rehashed every step).
 */
async function copyIndexKeepingItsAge(from: string, to: string): Promise<boolean> {
  try {
    const original = await stat(from);
    await copyFile(from, to);
    const stamp = Math.floor(original.mtimeMs / 1000);
    await utimes(to, stamp, stamp);
    return true;
  } catch {
    return false;
  }
}

/**
 * Records the workspace as the snapshot of a step. The temporary index starts as a copy of the user's
 * (its stat cache spares rehashing unchanged files), or from HEAD's tree when there is none.
 */
export async function snapshotWorkspace(input: SnapshotInput): Promise<SnapshotResult> {
  const top = await workTreeOf(input.workspace);
  if (!top) return { taken: false, reason: 'the workspace is not a git repository' };
  const scratch = await mkdtemp(path.join(tmpdir(), 'goalrun-snapshot-'));
  try {
    const index = path.join(scratch, 'index');
    const env = { GIT_INDEX_FILE: index };
    const userIndex = await git(top, ['rev-parse', '--path-format=absolute', '--git-path', 'index']);
    const copied = await copyIndexKeepingItsAge(userIndex, index);
    if (!copied && (await resolveRef(top, 'HEAD'))) await git(top, ['read-tree', 'HEAD'], env);
    await git(top, ['add', '-A', '--', '.'], env);
    const tree = await git(top, ['write-tree'], env);
    const ref = snapshotRef(input.sessionId, input.step);
    const previous = await previousSnapshot(top, input.sessionId, input.step);
    if (previous && (await git(top, ['rev-parse', `${previous}^{tree}`])) === tree) {
      await git(top, ['update-ref', ref, previous]);
      return { taken: true, commit: previous, tree, reused: true };
    }
    const message = `goalrun snapshot: session ${input.sessionId}, step ${input.step}`;
    const commit = await git(
      top,
      ['commit-tree', tree, ...(previous ? ['-p', previous] : []), '-m', message],
      SNAPSHOT_IDENTITY,
    );
    await git(top, ['update-ref', ref, commit]);
    return { taken: true, commit, tree, reused: false };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Deletes every snapshot ref of a session in a repository; returns how many were deleted. */
export async function deleteSnapshotRefs(workspace: string, sessionId: string): Promise<number> {
  const top = await workTreeOf(workspace);
  if (!top) return 0;
  const listed = await gitOrNull(top, ['for-each-ref', '--format=%(refname)', snapshotRefPrefix(sessionId)]);
  const refs = (listed ?? '').split('\n').filter(Boolean);
  if (refs.length === 0) return 0;
  const stdin = refs.map((ref) => `delete ${ref}\n`).join('');
  await new Promise<void>((resolve, reject) => {
    const child = execFile('git', ['update-ref', '--stdin'], { cwd: top }, (err) =>
      err ? reject(err) : resolve(),
    );
    child.stdin?.end(stdin);
  });
  return refs.length;
}
