/**
 * Patch sets: one marker that stands for many patches of the goal workflow (patches.ts). Plain data,
 * free of the SDK, so tests and the CLI can read it.
 */
import type { PatchId } from './patches';

/**
 * A marker that stands for a list of patches: a run that records it takes the new branch of each.
 * Each `patched()` call writes a marker and an upsert of the TemporalChangeVersion search attribute
 * (a visibility write), so a goal started with 18 separate patches wrote 36 events before its first
 * step; at 1,000 short goals that was a third of their history and most of the server's extra work
 * (issue 30). A new run now asks the newest set first and records only it; a run whose history has
 * no set marker (an older build's) is asked patch by patch, as before, so its replay is unchanged.
 * Patches added after a set are asked one by one until a later set covers them. A set is a durable
 * contract like a patch id: never change its list, add a new set at the front instead.
 */
export interface PatchSet {
  id: string;
  /** The release whose build first recorded it. */
  addedIn: string;
  covers: readonly PatchId[];
}

/** What the first set, patch-set-0.3.0, stands for: every patch of 0.1.0 to 0.3.0 then asked. */
const COVERED_BY_0_3_0: readonly PatchId[] = [
  'keep-every-steering-message',
  'command-queue',
  'tool-host-workspace-context',
  'stop-and-notify-hooks',
  'daily-budget',
  'workspace-snapshots',
  'workspace-snapshot-guard',
  'paid-calls',
  'goal-end-failure',
  'breaker-warns-first',
  'waits-that-end',
  'stall-watch',
  'store-outage-wait',
  'notify-targets',
  'failover-to-backup',
  'fast-takeover',
  'verified-completion',
  'sub-agents',
];

/** What patch-set-0.3.0-2 stands for: the 0.3.0 set and the two patches added after it. */
const COVERED_BY_0_3_0_2: readonly PatchId[] = [
  ...COVERED_BY_0_3_0,
  'traced-when-asked',
  'start-attributes-published',
];

/** What patch-set-0.3.0-3 stands for: the set before it and the close only for what is left. */
const COVERED_BY_0_3_0_3: readonly PatchId[] = [...COVERED_BY_0_3_0_2, 'close-only-what-is-left'];

/** What patch-set-0.3.0-4 stands for: the set before it and the open in one call. */
const COVERED_BY_0_3_0_4: readonly PatchId[] = [...COVERED_BY_0_3_0_3, 'open-in-one-call'];

/** What patch-set-0.3.0-5 stands for: the set before it and the finish answered with the end. */
const COVERED_BY_0_3_0_5: readonly PatchId[] = [...COVERED_BY_0_3_0_4, 'finish-answered-at-end'];

/** What patch-set-0.3.0-6 stands for: the set before it and the gathering in the opening workflow task. */
const COVERED_BY_0_3_0_6: readonly PatchId[] = [...COVERED_BY_0_3_0_5, 'gather-in-workflow-task'];

/** Newest first. */
export const PATCH_SETS: readonly PatchSet[] = [
  // The set before it and the loop woken by an activity's own promise.
  {
    id: 'patch-set-0.3.0-7',
    addedIn: '0.3.0',
    covers: [...COVERED_BY_0_3_0_6, 'serve-by-promise'],
  },
  // The set before it and the workspace context gathered in the workflow task that opens the goal.
  { id: 'patch-set-0.3.0-6', addedIn: '0.3.0', covers: COVERED_BY_0_3_0_6 },
  { id: 'patch-set-0.3.0-5', addedIn: '0.3.0', covers: COVERED_BY_0_3_0_5 },
  { id: 'patch-set-0.3.0-4', addedIn: '0.3.0', covers: COVERED_BY_0_3_0_4 },
  { id: 'patch-set-0.3.0-3', addedIn: '0.3.0', covers: COVERED_BY_0_3_0_3 },
  // A new goal records one marker, not three.
  { id: 'patch-set-0.3.0-2', addedIn: '0.3.0', covers: COVERED_BY_0_3_0_2 },
  { id: 'patch-set-0.3.0', addedIn: '0.3.0', covers: COVERED_BY_0_3_0 },
];

/** The patch ids a run's markers stand for: each set marker replaced by the patches it covers. */
export function expandPatchSets(
  markers: readonly string[],
  sets: readonly PatchSet[] = PATCH_SETS,
): string[] {
  const byId = new Map(sets.map((set) => [set.id, set]));
  const ids = markers.flatMap((marker): readonly string[] => byId.get(marker)?.covers ?? [marker]);
  return [...new Set(ids)];
}
