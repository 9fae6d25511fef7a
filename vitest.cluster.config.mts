import { defineConfig } from 'vitest/config';

/**
 * `npm run test:cluster`: the compose topology on a real Temporal server (test/cluster). Not part of
 * `npm test`: it builds (once) and runs its own server, on ports of its own, and takes a few minutes.
 */
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.cluster.ts'],
    pool: 'forks',
    maxWorkers: 1,
    // The first run builds the server binaries (about 8 minutes on 2 cores): the hook waits for it.
    hookTimeout: 20 * 60_000,
    testTimeout: 15 * 60_000,
    reporters: ['default'],
  },
});
