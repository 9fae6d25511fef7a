/**
 * Vitest sequencer: the test files that spend minutes waiting on a goal's real timers start first.
 *
 * Vitest orders files by the durations of its last run, kept under node_modules; a fresh clone (every
 * CI run) has none, so it starts the largest files first and these small ones last, where their
 * minutes of waiting ran with the machine otherwise idle at the end of the run. Started first, their
 * waiting overlaps the files that keep the cores busy.
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

/** Where a file stands in WAITING_FILES, or past its end. */
function rank(relativePath: string): number {
  const at = WAITING_FILES.indexOf(relativePath);
  return at === -1 ? WAITING_FILES.length : at;
}

/** Vitest's own order, with WAITING_FILES moved to the front. */
export class WaitingFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root.replace(/\/?$/, '/');
    const relative = (file: TestSpecification) =>
      file.moduleId.startsWith(root) ? file.moduleId.slice(root.length) : file.moduleId;
    // Array.prototype.sort is stable: files of equal rank keep vitest's order.
    return sorted.sort((a, b) => rank(relative(a)) - rank(relative(b)));
  }
}
