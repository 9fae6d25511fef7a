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

  it('keeps a field named __proto__ as a field, and the object a plain one', () => {
    // The counterexample fast-check found: JSON.parse makes `__proto__` an own field, as a payload would.
    const ours = JSON.parse('{"__proto__": {"polluted": true}, "kept": 1}');
    const merged = mergeChanges<Record<string, unknown>>({}, ours, {});
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect((merged as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.keys(merged).sort()).toEqual(['__proto__', 'kept']);
    expect(sameValue(merged, ours)).toBe(true);
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
