import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // npm run test:upgrade runs it, with its own config: it builds the previous release first.
    exclude: [...configDefaults.exclude, 'test/upgrade/**'],
    // Forks, not threads: the Temporal worker's native bridge is happier per process.
    pool: 'forks',
    // Two cores: two test files at a time, each running goals with its own worker.
    maxWorkers: 2,
    globalSetup: ['./test/support/global-setup.ts', './test/support/database-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
