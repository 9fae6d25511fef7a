/**
 * Vitest sequencer: the test files that spend minutes waiting on a goal's real timers start early,
 * spread among the files that keep the cores busy.
 *
 * Vitest orders files by the durations of its last run, kept under node_modules; a fresh clone (every
 * CI run) has none, so it starts the largest files first and these small ones last, where their
 * minutes of waiting ran with the machine otherwise idle at the end of the run. Started all at once at
 * the front, they took every slot for the first 3.7 minutes of a run (2026-12-05, three files at once)
 * and left the cores as idle as at the end. Spread, about one slot waits while the others compute.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files whose goals wait on timers measured in real minutes (a time limit, a daily-budget or quota
 * wait, a heartbeat or stall timeout), longest first. Order only: a file missing here still runs.
 */
export const WAITING_FILES = [
  'test/e2e/daily-wait-continue-as-new.test.ts',
  'test/e2e/ending-races.test.ts',
  'test/e2e/liveness.test.ts',
  'test/e2e/pause-and-limits.test.ts',
  'test/e2e/stall-watch.test.ts',
  'test/e2e/interrupt-and-time-limit.test.ts',
];

/** When the config names no number of files at once: one more than this 2-core machine's cores. */
const DEFAULT_FILES_AT_ONCE = 3;

/**
 * Vitest's own order with WAITING_FILES spread through its head: a waiting file first, then as many
 * busy files as there are other slots, then the next waiting file, and so on.
 */
export function spreadWaitingFiles<T>(
  ordered: T[],
  isWaiting: (file: T) => number,
  filesAtOnce: number,
): T[] {
  const waiting = ordered
    .filter((file) => isWaiting(file) !== -1)
    .sort((a, b) => isWaiting(a) - isWaiting(b));
  const busy = ordered.filter((file) => isWaiting(file) === -1);
  const busyBetween = Math.max(1, filesAtOnce - 1);
  const spread: T[] = [];
  for (const file of waiting) spread.push(file, ...busy.splice(0, busyBetween));
  return [...spread, ...busy];
}

/** Vitest's own order, with WAITING_FILES spread among its first files. */
export class WaitingFilesSpread extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root.replace(/\/?$/, '/');
    const relative = (file: TestSpecification) =>
      file.moduleId.startsWith(root) ? file.moduleId.slice(root.length) : file.moduleId;
    const filesAtOnce = Number(this.ctx.config.maxWorkers) || DEFAULT_FILES_AT_ONCE;
    return spreadWaitingFiles(sorted, (file) => WAITING_FILES.indexOf(relative(file)), filesAtOnce);
  }
}
