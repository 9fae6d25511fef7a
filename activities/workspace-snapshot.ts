/**
 * Per-step workspace snapshots (issue 17 §3): at the end of every step, when the workspace is a git
 * repository, the workspace's files (untracked ones and bash edits included, .gitignore honoured) are
 * recorded as a commit under `refs/goalrun/<session>/<step>`, made with plumbing only: a temporary
 * index, `git add -A`, `write-tree`, `commit-tree`, `update-ref`. The user's branches, index, stash
 * and HEAD are never written. An unchanged tree reuses the previous snapshot's commit (no new objects).
 *
 * The repository is the model's to write, so (issue 24) its pointer files are checked first
 * (git/repository-layout.ts), a repository other than the one the goal started in is refused, and
 * git runs by the rule of git/safe-git.ts: in a sandbox where only the objects and refs are
 * writable. Files over a size cap are left out, and the bytes a snapshot added are reported so that
 * the workflow can stop snapshots at the goal's cap.
 */
import { copyFile, lstat, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SandboxMode } from '../core/sandbox-settings';
import { DEFAULT_SNAPSHOT_MAX_FILE_BYTES, type SkippedFiles } from '../core/workspace-snapshot-state';
import { findRepository, type RepositoryLayout, sameRepository } from './git/repository-layout';
import {
  type GitJob,
  gitPlaceFor,
  makeScratch,
  removeScratch,
  runGitScript,
  scratchPath,
} from './git/safe-git';
import { defaultSandboxHost, type SandboxHost } from './sandbox/host';

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
  /** The goal's sandbox mode: `off` runs git on the host by the safe rule; absent or any other, in the sandbox. */
  sandboxMode?: SandboxMode;
  /** The repository the goal started in: a snapshot of any other is refused (absent: goals before 0.3.0). */
  repository?: RepositoryLayout;
  /** Files larger than this are left out (absent: DEFAULT_SNAPSHOT_MAX_FILE_BYTES). */
  maxFileBytes?: number;
}

/** What a snapshot did: a commit (new or reused), or why none was taken. */
export type SnapshotResult =
  | {
      taken: true;
      commit: string;
      tree: string;
      reused: boolean;
      /** Bytes of the objects this snapshot added (0 when reused). */
      addedBytes?: number;
      /** Files left out for their size. */
      skipped?: SkippedFiles;
    }
  | {
      taken: false;
      reason: string;
      /** The repository is not one git may run on (a pointer elsewhere, or made during the goal). */
      refused?: boolean;
    };

/** The repository a workspace is in: null when none, or when git may not run on it (then why). */
export interface WorkspaceRepository {
  repository: RepositoryLayout | null;
  refused?: string;
}

/** The repository a workspace is in, checked (files only: no git runs). */
export function workspaceRepository(workspace: string): WorkspaceRepository {
  const found = findRepository(workspace);
  if (found.kind === 'found') return { repository: found.layout };
  return found.kind === 'refused' ? { repository: null, refused: found.reason } : { repository: null };
}

/** What a workspace that is in no repository says. */
export const NOT_A_REPOSITORY = 'the workspace is not a git repository';
/** Up to this many changed files are named one by one to `git add`; above, it is told which to leave out. */
const LITERAL_PATHSPECS_MAX = 1000;
/** Files named in the note of a snapshot that left files out. */
const SKIPPED_NAMES_SHOWN = 5;
/** Separates the refs from the file list in the first script's output. */
const FILES_MARK = '::files::';

/** Identity of snapshot commits (never the user's config: it may be missing, or sign commits). */
const SNAPSHOT_IDENTITY = {
  GIT_AUTHOR_NAME: 'goalrun',
  GIT_AUTHOR_EMAIL: 'goalrun@localhost',
  GIT_COMMITTER_NAME: 'goalrun',
  GIT_COMMITTER_EMAIL: 'goalrun@localhost',
};

/**
 * First run: the temporary index from HEAD when the user has none, the session's snapshot refs, and
 * every file that differs from the index (modified, deleted, untracked and not ignored).
 * $1: `fresh` when the index must be read from HEAD; $2: the session's ref prefix.
 */
const LIST_SCRIPT = `set -e
if [ "$1" = fresh ] && g rev-parse -q --verify 'HEAD^{commit}' >/dev/null; then g read-tree HEAD; fi
g for-each-ref --format='%(refname)' "$2"
printf '%s\\n' '${FILES_MARK}'
g ls-files -z --modified --deleted --others --exclude-standard`;

/**
 * Second run: the changes added (`list`: the paths named; `exclude`: everything but the paths
 * named; `none`), the tree written, the previous snapshot reused when its tree is the same, else a
 * commit made on it; then the bytes of the blobs that differ from the previous snapshot (or HEAD).
 * $1 mode, $2 pathspec file, $3 ref, $4 previous ref or '', $5 message. Prints `reused|new commit tree bytes`.
 */
const COMMIT_SCRIPT = `set -e
case "$1" in
  list) g --literal-pathspecs add -A --pathspec-from-file="$2" --pathspec-file-nul ;;
  exclude) g add -A --pathspec-from-file="$2" --pathspec-file-nul ;;
esac
tree=$(g write-tree)
prev=; prevtree=
# Both ids in one git run: the commit on the first line, its tree on the second.
if [ -n "$4" ] && both=$(g rev-parse "$4^{commit}" "$4^{tree}" 2>/dev/null); then
  prev=\${both%%[!0-9a-f]*}; prevtree=\${both##*[!0-9a-f]}
fi
if [ -n "$prev" ] && [ "$prevtree" = "$tree" ]; then
  g update-ref "$3" "$prev"
  echo "reused $prev $tree 0"
  exit 0
fi
if [ -n "$prev" ]; then commit=$(g commit-tree "$tree" -p "$prev" -m "$5"); else commit=$(g commit-tree "$tree" -m "$5"); fi
g update-ref "$3" "$commit"
base=$prev
[ -n "$base" ] || base=$(g rev-parse -q --verify 'HEAD^{tree}') || base=$(g hash-object -t tree /dev/null)
bytes=$(g diff-tree -r --no-renames "$base" "$tree" | awk '$4 !~ /^0+$/ { print $4 }' \\
  | g cat-file --batch-check='%(objectsize:disk)' | awk '$1 ~ /^[0-9]+$/ { s += $1 } END { print s + 0 }')
echo "new $commit $tree $bytes"`;

/**
 * Git trusts an index entry's cached stat data only when the file is older than the index itself
 * ("racy git"). A plain copy is stamped now, so a file changed within the same second as the user's
 * last `git add`, at the same size, would look unchanged and its old content would be snapshotted.
 * The copy keeps the original's time, down to the whole second: entries racy in the user's index are
 * racy in the copy too, and no others (files of a fresh clone are not all rehashed every step).
 * Only a plain file is copied: an index the model replaced by a symlink is not followed.
 */
async function copyIndexKeepingItsAge(from: string, to: string): Promise<boolean> {
  try {
    if (!(await lstat(from)).isFile()) return false;
    const original = await stat(from);
    await copyFile(from, to);
    const stamp = Math.floor(original.mtimeMs / 1000);
    await utimes(to, stamp, stamp);
    return true;
  } catch {
    return false;
  }
}

/** The directories a snapshot writes: objects and refs of the common directory. */
function snapshotWritable(layout: RepositoryLayout): string[] {
  return ['objects', 'refs', 'reftable'].map((name) => path.join(layout.commonDir, name));
}

/** The newest snapshot ref before a step (a resumed or forked session may skip numbers), or ''. */
function previousRef(refs: string[], sessionId: string, step: number): string {
  const prefix = snapshotRefPrefix(sessionId);
  const steps = refs
    .map((ref) => Number(ref.slice(prefix.length)))
    .filter((n) => Number.isInteger(n) && n < step)
    .sort((a, b) => b - a);
  return steps.length > 0 ? snapshotRef(sessionId, steps[0]) : '';
}

/** The changed paths split: given to `git add`, left out for their size, left out as nested repositories. */
async function sortChanges(
  top: string,
  listed: string[],
  maxFileBytes: number,
): Promise<{ kept: string[]; tooLarge: string[]; nested: string[] }> {
  const kept: string[] = [];
  const tooLarge: string[] = [];
  const nested: string[] = [];
  for (const file of new Set(listed)) {
    // An untracked repository inside the work tree (git lists it with a slash) is never recorded.
    if (file.endsWith('/')) {
      nested.push(file);
      continue;
    }
    const info = await lstat(path.join(top, file)).catch(() => null);
    // Gone: `git add -A` records the deletion.
    if (!info) kept.push(file);
    // A directory where a file was (its files are listed one by one), or a submodule: left as it is.
    else if (info.isDirectory()) continue;
    else if (info.isFile() && info.size > maxFileBytes) tooLarge.push(file);
    else kept.push(file);
  }
  return { kept, tooLarge, nested };
}

/** How `git add` is told what to add, and the pathspec file's NUL-separated content. */
function addMode(changes: { kept: string[]; tooLarge: string[]; nested: string[] }): {
  mode: 'none' | 'list' | 'exclude';
  pathspecs: string;
} {
  if (changes.kept.length === 0) return { mode: 'none', pathspecs: '' };
  if (changes.kept.length <= LITERAL_PATHSPECS_MAX)
    return { mode: 'list', pathspecs: changes.kept.join('\0') };
  const excluded = [...changes.tooLarge, ...changes.nested].map((file) => `:(exclude,literal)${file}`);
  return { mode: 'exclude', pathspecs: ['.', ...excluded].join('\0') };
}

/**
 * Records the workspace as the snapshot of a step. The temporary index starts as a copy of the user's
 * (its stat cache spares rehashing unchanged files), or from HEAD's tree when there is none.
 */
export async function snapshotWorkspace(
  input: SnapshotInput,
  host: SandboxHost = defaultSandboxHost(),
): Promise<SnapshotResult> {
  const found = findRepository(input.workspace);
  if (found.kind === 'none') return { taken: false, reason: NOT_A_REPOSITORY };
  if (found.kind === 'refused') return { taken: false, refused: true, reason: found.reason };
  const { layout } = found;
  if (input.repository && !sameRepository(layout, input.repository)) {
    return {
      taken: false,
      refused: true,
      reason: `the workspace is now in the repository at ${layout.top}, not in the one the goal started in (${input.repository.top}): a repository made during a goal is never snapshotted`,
    };
  }
  const place = await gitPlaceFor(input.sandboxMode, host);
  if ('error' in place) return { taken: false, reason: place.error };
  const scratch = makeScratch();
  try {
    const at = { place, scratch };
    const job: GitJob = {
      ...at,
      layout,
      writable: (await existing(snapshotWritable(layout))).filter(Boolean) as string[],
      env: { GIT_INDEX_FILE: scratchPath(at, 'index'), ...SNAPSHOT_IDENTITY },
    };
    const copied = await copyIndexKeepingItsAge(
      path.join(layout.gitDir, 'index'),
      path.join(scratch, 'index'),
    );
    const prefix = snapshotRefPrefix(input.sessionId);
    const listing = await runGitScript(job, 'listing the changes', LIST_SCRIPT, [
      copied ? 'copied' : 'fresh',
      prefix,
    ]);
    const mark = listing.stdout.indexOf(`${FILES_MARK}\n`);
    const refs = listing.stdout.slice(0, Math.max(mark, 0)).split('\n').filter(Boolean);
    const files =
      mark < 0
        ? []
        : listing.stdout
            .slice(mark + FILES_MARK.length + 1)
            .split('\0')
            .filter(Boolean);
    const changes = await sortChanges(
      layout.top,
      files,
      input.maxFileBytes ?? DEFAULT_SNAPSHOT_MAX_FILE_BYTES,
    );
    const add = addMode(changes);
    await writeFile(path.join(scratch, 'pathspecs'), add.pathspecs);
    const message = `goalrun snapshot: session ${input.sessionId}, step ${input.step}`;
    const committed = await runGitScript(job, 'recording the snapshot', COMMIT_SCRIPT, [
      add.mode,
      scratchPath(job, 'pathspecs'),
      snapshotRef(input.sessionId, input.step),
      previousRef(refs, input.sessionId, input.step),
      message,
    ]);
    const [kind, commit, tree, bytes] = committed.stdout.trim().split('\n').at(-1)?.split(' ') ?? [];
    if ((kind !== 'new' && kind !== 'reused') || !commit || !tree)
      throw new Error(`the snapshot's git said something unexpected: ${committed.stdout.slice(0, 200)}`);
    return {
      taken: true,
      commit,
      tree,
      reused: kind === 'reused',
      addedBytes: Number(bytes) || 0,
      ...(changes.tooLarge.length > 0
        ? {
            skipped: {
              count: changes.tooLarge.length,
              names: changes.tooLarge.slice(0, SKIPPED_NAMES_SHOWN),
            },
          }
        : {}),
    };
  } finally {
    removeScratch(scratch);
  }
}

/** Each directory that exists, else undefined in its place. */
async function existing(dirs: string[]): Promise<(string | undefined)[]> {
  return Promise.all(
    dirs.map(async (dir) => ((await lstat(dir).catch(() => null))?.isDirectory() ? dir : undefined)),
  );
}
