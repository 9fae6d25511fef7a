import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { WaitingFilesSpread } from './test/support/waiting-files-spread';

/**
 * One test file more than there are cores. Two files on two cores left a third of the machine idle
 * (process accounting over a whole run: 68 % busy), since many e2e files spend minutes waiting on a
 * goal's timers (a time limit, a heartbeat timeout, a daily-budget wait); with three the suite took
 * 1,433 s instead of 1,962 on this 2-core machine (docs/performance.md, "The suite's processes").
 */
const TEST_FILES_AT_ONCE = Math.min(8, os.availableParallelism() + 1);

export default defineConfig({
  test: {
    // Forks, not threads: the Temporal worker's native bridge is happier per process.
    pool: 'forks',
    // Each file runs goals with a worker of its own.
    maxWorkers: TEST_FILES_AT_ONCE,
    // A fresh clone has no durations from a last run: the files that wait on timers start early, spread.
    sequence: { sequencer: WaitingFilesSpread },
    testTimeout: 180_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    // Each project names its own files: a project's lists are added to the root's, not put in place.
    projects: [
      {
        extends: true,
        test: {
          name: 'core',
          include: ['test/core/**/*.test.ts'],
          // Pure code (no I/O, no vi.mock, no environment or globals touched), so its files share a
          // process: a fork per file cost about 0.9 s of CPU, and test/core's CPU fell by half.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'rest',
          include: ['test/**/*.test.ts'],
          // npm run test:upgrade runs it, with its own config: it builds the previous release first.
          exclude: [...configDefaults.exclude, 'test/upgrade/**', 'test/core/**'],
          globalSetup: ['./test/support/global-setup.ts', './test/support/database-setup.ts'],
        },
      },
    ],
  },
});
