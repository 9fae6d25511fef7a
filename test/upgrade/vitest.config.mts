import path from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:upgrade`: goals started by the previous release's workers finish on this build's.
 * Apart from the main suite: it builds that release first (cached), and runs its own dev server.
 */
export default defineConfig({
  root: path.resolve(import.meta.dirname, '../..'),
  test: {
    include: ['test/upgrade/**/*.test.ts'],
    pool: 'forks',
    globalSetup: ['./test/support/database-setup.ts', './test/upgrade/release-setup.ts'],
    testTimeout: 420_000,
    hookTimeout: 600_000,
    reporters: ['default'],
  },
});
