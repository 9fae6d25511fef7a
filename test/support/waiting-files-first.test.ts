import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import { WAITING_FILES, WaitingFilesFirst } from './waiting-files-first';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Just what BaseSequencer.sort reads: a fresh clone's cache knows file sizes, no durations. */
function freshCloneSequencer(sizes: Record<string, number>): WaitingFilesFirst {
  const ctx = {
    config: { root: ROOT },
    cache: {
      getFileTestResults: () => undefined,
      getFileStats: (key: string) => {
        const size = sizes[key.slice(key.indexOf(':') + 1)];
        return size === undefined ? undefined : { size };
      },
    },
  };
  return new WaitingFilesFirst(ctx as unknown as Vitest);
}

function spec(relativePath: string): TestSpecification {
  const project = { name: '', config: { sequence: { groupOrder: 0 }, isolate: true } };
  return { moduleId: path.join(ROOT, relativePath), project } as unknown as TestSpecification;
}

describe('WaitingFilesFirst', () => {
  it('names files that exist (a renamed file would quietly lose its place)', () => {
    for (const file of WAITING_FILES) expect(fs.existsSync(path.join(ROOT, file)), file).toBe(true);
  });

  it('starts the waiting files first, in their order, and keeps vitest’s order for the rest', async () => {
    const sizes = {
      'test/core/big.test.ts': 90_000,
      'test/e2e/medium.test.ts': 40_000,
      [WAITING_FILES[1]]: 5_000,
      [WAITING_FILES[0]]: 3_000,
      'test/core/small.test.ts': 1_000,
    };
    const files = Object.keys(sizes).reverse().map(spec);
    const sorted = await freshCloneSequencer(sizes).sort(files);
    expect(sorted.map((f) => path.relative(ROOT, f.moduleId))).toEqual([
      WAITING_FILES[0],
      WAITING_FILES[1],
      'test/core/big.test.ts',
      'test/e2e/medium.test.ts',
      'test/core/small.test.ts',
    ]);
  });
});
