import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeChanges, sameValue } from '../../core/state-merge';

describe('merging a write with changes made meanwhile', () => {
  it('keeps a switch a command turned while the compaction ran, and applies what the compaction changed', () => {
    const base = {
      plan: { fromSeq: 1 },
      autoCompact: { enabled: true, consecutiveFailures: 0 },
      budget: { window: 8 },
    };
    const ours = {
      plan: { fromSeq: 9 },
      autoCompact: { enabled: true, consecutiveFailures: 0 },
      budget: { window: 8 },
    };
    const current = { ...base, autoCompact: { enabled: false, consecutiveFailures: 0 }, budget: null };
    expect(mergeChanges<unknown>(base, ours, current)).toEqual({
      plan: { fromSeq: 9 },
      autoCompact: { enabled: false, consecutiveFailures: 0 },
      budget: null,
    });
  });

  it('merges nested fields one by one', () => {
    const base = { autoCompact: { enabled: true, consecutiveFailures: 1, paused: false } };
    const ours = { autoCompact: { enabled: true, consecutiveFailures: 2, paused: false } };
    const current = { autoCompact: { enabled: false, consecutiveFailures: 1, paused: false } };
    expect(mergeChanges(base, ours, current)).toEqual({
      autoCompact: { enabled: false, consecutiveFailures: 2, paused: false },
    });
  });

  it('gives current when ours changed nothing, and ours when nothing else changed', () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(json, json, (base, current) => {
        expect(sameValue(mergeChanges(base, base, current), current)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(json, json, (base, ours) => {
        expect(sameValue(mergeChanges(base, ours, base), ours)).toBe(true);
      }),
    );
  });
});
