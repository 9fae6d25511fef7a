/**
 * What `goalrun clean` does to a cleaned session's snapshots (issue 24, bounded disk): its refs
 * (refs/goalrun/<session>/*) are deleted, then the objects only those snapshots held are removed.
 * Only those: the objects of the deleted snapshots that git then finds unreachable (`git prune
 * --dry-run`: nothing else of the repository's, no index, no reflog, no other ref holds them), and
 * untouched for PRUNE_GRACE (git freshens an object whenever it writes it again, so one a running
 * goal's snapshot is about to use is kept). The user's own unreachable objects are left for their gc.
 * Git runs by the rule of git/safe-git.ts.
 */
import { lstat, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { findRepository } from './git/repository-layout';
import {
  type GitJob,
  gitPlaceFor,
  makeScratch,
  removeScratch,
  runGitScript,
  scratchPath,
} from './git/safe-git';
import { defaultSandboxHost, type SandboxHost } from './sandbox/host';
import { snapshotRefPrefix } from './workspace-snapshot';

/** An unreachable snapshot object changed more recently than this is kept (git's --expire). */
export const PRUNE_GRACE = '1.hour.ago';

/** What a clean removed from one repository. */
export interface SnapshotsRemoved {
  refs: number;
  objects: number;
}

/**
 * $1 ours-file, $2 unreachable-file, $3 expiry, then the ref prefixes. Lists the snapshots' refs and
 * objects, deletes the refs, then lists the loose objects now unreachable and older than the expiry.
 */
const REMOVE_SCRIPT = `set -e
ours=$1; unreachable=$2; expire=$3; shift 3
refs=$(for prefix in "$@"; do g for-each-ref --format='%(refname)' "$prefix"; done)
if [ -z "$refs" ]; then echo 0; exit 0; fi
printf '%s\\n' "$refs" | g rev-list --objects --stdin > "$ours"
printf '%s\\n' "$refs" | sed 's/^/delete /' | g update-ref --stdin
g prune --dry-run --expire="$expire" > "$unreachable"
printf '%s\\n' "$refs" | wc -l`;

/** The loose object files of these ids under a common directory, when they are plain files in plain directories. */
async function removeLooseObjects(commonDir: string, ids: Iterable<string>): Promise<number> {
  let removed = 0;
  for (const id of ids) {
    if (!/^[0-9a-f]{40,64}$/.test(id)) continue;
    const dir = path.join(commonDir, 'objects', id.slice(0, 2));
    const file = path.join(dir, id.slice(2));
    // The model can write objects/: a fan-out directory replaced by a symlink is not followed.
    const [dirInfo, fileInfo] = await Promise.all([
      lstat(dir).catch(() => null),
      lstat(file).catch(() => null),
    ]);
    if (!dirInfo?.isDirectory() || !fileInfo?.isFile()) continue;
    await unlink(file).catch(() => undefined);
    removed += 1;
  }
  return removed;
}

/** First words of each line of a file written in the scratch directory. */
async function firstWords(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .map((line) => line.split(' ')[0])
    .filter(Boolean);
}

/**
 * Deletes the snapshot refs of these sessions in the repository of a workspace, then removes the
 * objects only they held. A workspace that is no repository (any more), or whose pointer files lead
 * elsewhere, is left alone.
 */
export async function removeSnapshots(
  workspace: string,
  sessionIds: readonly string[],
  host: SandboxHost = defaultSandboxHost(),
): Promise<SnapshotsRemoved> {
  const found = findRepository(workspace);
  if (found.kind !== 'found' || sessionIds.length === 0) return { refs: 0, objects: 0 };
  const place = await gitPlaceFor(undefined, host, true);
  if ('error' in place) return { refs: 0, objects: 0 };
  const { layout } = found;
  const scratch = makeScratch();
  try {
    // The whole common directory: deleting a packed ref rewrites packed-refs there.
    const job: GitJob = { place, scratch, layout, writable: [layout.commonDir] };
    const ran = await runGitScript(job, 'deleting the snapshot refs', REMOVE_SCRIPT, [
      scratchPath(job, 'ours'),
      scratchPath(job, 'unreachable'),
      PRUNE_GRACE,
      ...sessionIds.map(snapshotRefPrefix),
    ]);
    const refs = Number(ran.stdout.trim()) || 0;
    if (refs === 0) return { refs: 0, objects: 0 };
    const ours = new Set(await firstWords(path.join(scratch, 'ours')));
    const gone = (await firstWords(path.join(scratch, 'unreachable'))).filter((id) => ours.has(id));
    return { refs, objects: await removeLooseObjects(layout.commonDir, gone) };
  } finally {
    removeScratch(scratch);
  }
}
