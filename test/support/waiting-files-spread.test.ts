import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import { spreadWaitingFiles, WAITING_FILES, WaitingFilesSpread } from './waiting-files-spread';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Just what BaseSequencer.sort reads: a fresh clone's cache knows file sizes, no durations. */
function freshCloneSequencer(sizes: Record<string, number>, maxWorkers: number): WaitingFilesSpread {
  const ctx = {
    config: { root: ROOT, maxWorkers },
    cache: {
      getFileTestResults: () => undefined,
      getFileStats: (key: string) => {
        const size = sizes[key.slice(key.indexOf(':') + 1)];
        return size === undefined ? undefined : { size };
      },
    },
  };
  return new WaitingFilesSpread(ctx as unknown as Vitest);
}

function spec(relativePath: string): TestSpecification {
  const project = { name: '', config: { sequence: { groupOrder: 0 }, isolate: true } };
  return { moduleId: path.join(ROOT, relativePath), project } as unknown as TestSpecification;
}

describe('WaitingFilesSpread', () => {
  it('names files that exist (a renamed file would quietly lose its place)', () => {
    for (const file of WAITING_FILES) expect(fs.existsSync(path.join(ROOT, file)), file).toBe(true);
  });

  it('spreads the waiting files through vitest’s order, one per round of starts, the rest in vitest’s order', async () => {
    const sizes = {
      'test/core/big.test.ts': 90_000,
      'test/e2e/medium.test.ts': 40_000,
      [WAITING_FILES[1]]: 5_000,
      'test/e2e/small.test.ts': 4_000,
      [WAITING_FILES[0]]: 3_000,
      'test/core/smaller.test.ts': 2_000,
      'test/core/smallest.test.ts': 1_000,
    };
    const files = Object.keys(sizes).reverse().map(spec);
    const sorted = await freshCloneSequencer(sizes, 3).sort(files);
    expect(sorted.map((f) => path.relative(ROOT, f.moduleId))).toEqual([
      WAITING_FILES[0],
      'test/core/big.test.ts',
      'test/e2e/medium.test.ts',
      WAITING_FILES[1],
      'test/e2e/small.test.ts',
      'test/core/smaller.test.ts',
      'test/core/smallest.test.ts',
    ]);
  });
});

describe('spreadWaitingFiles', () => {
  const waitingRank = (name: string) => (name.startsWith('w') ? Number(name.slice(1)) : -1);

  it('puts as many busy files between two waiting ones as there are other slots', () => {
    expect(spreadWaitingFiles(['a', 'w1', 'b', 'c', 'd', 'w0', 'e'], waitingRank, 4)).toEqual([
      'w0',
      'a',
      'b',
      'c',
      'w1',
      'd',
      'e',
    ]);
  });

  it('alternates with one file at a time, and keeps every file when the busy ones run out', () => {
    expect(spreadWaitingFiles(['w2', 'a', 'w0', 'w1'], waitingRank, 1)).toEqual(['w0', 'a', 'w1', 'w2']);
    expect(spreadWaitingFiles(['a', 'b'], waitingRank, 3)).toEqual(['a', 'b']);
  });
});
