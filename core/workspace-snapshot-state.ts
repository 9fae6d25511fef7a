/**
 * What a goal's per-step snapshots remember across continue-as-new and resume (GoalState.snapshots,
 * issue 24): the repository the workspace was in when the goal started (a repository the model makes
 * later is never snapshotted), the bytes the snapshots added (they stop at the goal's cap), and why
 * they stopped. Pure rules; the snapshot itself is activities/workspace-snapshot.ts.
 */

const MIB = 1024 * 1024;

/** A file larger than this is left out of a snapshot (config `snapshot_max_file_mib`). */
export const DEFAULT_SNAPSHOT_MAX_FILE_BYTES = 10 * MIB;
/** A goal's snapshots stop once their objects pass this (config `snapshot_max_total_mib`). */
export const DEFAULT_SNAPSHOT_MAX_TOTAL_BYTES = 1024 * MIB;

/** The directories of one work tree's repository, all real paths. */
export interface RepositoryLayout {
  /** The top of the work tree. */
  top: string;
  /** The repository directory of this work tree: `.git`, or a linked worktree's `<common>/worktrees/<name>`. */
  gitDir: string;
  /** Where objects, refs, config and hooks live: the gitDir, or the main repository's for a linked worktree. */
  commonDir: string;
}

/** Files a snapshot left out for their size: a few names, and how many in all. */
export interface SkippedFiles {
  count: number;
  names: string[];
}

/** A goal's snapshot caps (GoalDefinition.snapshots, from the config), in MiB. */
export interface SnapshotLimits {
  maxFileMib?: number;
  maxTotalMib?: number;
}

/** What a goal's snapshots know across executions. */
export interface SnapshotState {
  /** The repository the workspace was in when the goal started; null: none, so none is ever taken. */
  repository: RepositoryLayout | null;
  /** Bytes of the objects the goal's snapshots added. */
  bytes: number;
  /** Why snapshots stopped for the rest of the goal (a refusal, the size cap), or null. */
  stopped: string | null;
  /** What was last said about files left out for their size ('' when nothing was). */
  skippedNote?: string;
}

/** The caps in bytes. */
export function snapshotCaps(limits: SnapshotLimits | undefined): {
  maxFileBytes: number;
  maxTotalBytes: number;
} {
  return {
    maxFileBytes: limits?.maxFileMib ? limits.maxFileMib * MIB : DEFAULT_SNAPSHOT_MAX_FILE_BYTES,
    maxTotalBytes: limits?.maxTotalMib ? limits.maxTotalMib * MIB : DEFAULT_SNAPSHOT_MAX_TOTAL_BYTES,
  };
}

/** A size in MiB, as the notes say it. */
export function mib(bytes: number): string {
  const value = bytes / MIB;
  return `${Number.isInteger(value) ? value : value.toFixed(1)} MiB`;
}

/** The state of a goal that starts in this repository (or in none). */
export function startSnapshots(
  repository: RepositoryLayout | null,
  stopped: string | null = null,
): SnapshotState {
  return { repository, bytes: 0, stopped };
}

/** What one snapshot changes: its bytes counted, a note when the files left out change, the stop at the cap. */
export function afterSnapshot(
  state: SnapshotState,
  result: { addedBytes?: number; skipped?: SkippedFiles },
  caps: { maxFileBytes: number; maxTotalBytes: number },
): { state: SnapshotState; note: string | null; notice: string | null } {
  const bytes = state.bytes + Math.max(0, result.addedBytes ?? 0);
  const skipped = result.skipped;
  const skippedNote = skipped
    ? `the snapshot left out ${skipped.count} file${skipped.count === 1 ? '' : 's'} over ${mib(caps.maxFileBytes)} (snapshot_max_file_mib): ${skipped.names.join(', ')}${skipped.count > skipped.names.length ? ', …' : ''}`
    : '';
  const note = skippedNote && skippedNote !== (state.skippedNote ?? '') ? skippedNote : null;
  const over = bytes >= caps.maxTotalBytes;
  const stopped = over
    ? `this goal's snapshots reached ${mib(bytes)}, over their cap of ${mib(caps.maxTotalBytes)} (snapshot_max_total_mib): no more are taken`
    : state.stopped;
  return {
    state: { ...state, bytes, skippedNote, stopped },
    note,
    notice: over && !state.stopped ? `workspace snapshots stopped: ${stopped}` : null,
  };
}
