/** The memory tool's packing rule (issue 17, 003's rule): fill up to the budget, highest rank first, never past it. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MEMORY_RESULT_MAX_TOKENS, memoryBudgetTokens, packByRank } from '../../core/memory-packing';

const items = fc.array(
  fc.record({ rank: fc.double({ min: 0, max: 1, noNaN: true }), tokens: fc.integer({ min: 0, max: 500 }) }),
  { maxLength: 40 },
);

describe('packByRank', () => {
  it('never goes past the budget', () => {
    fc.assert(
      fc.property(items, fc.integer({ min: 0, max: 3000 }), (list, budget) => {
        const packed = packByRank(list, budget);
        expect(packed.reduce((sum, item) => sum + item.tokens, 0)).toBeLessThanOrEqual(budget);
      }),
    );
  });

  it('returns highest rank first, and every item left out did not fit when its turn came', () => {
    fc.assert(
      fc.property(items, fc.integer({ min: 0, max: 3000 }), (list, budget) => {
        const packed = packByRank(list, budget);
        for (let i = 1; i < packed.length; i++)
          expect(packed[i - 1].rank).toBeGreaterThanOrEqual(packed[i].rank);
        // Replay the rule: in rank order, what is left when an item's turn comes.
        const order = list.map((item, index) => ({ item, index }));
        order.sort((a, b) => b.item.rank - a.item.rank || a.index - b.index);
        let left = budget;
        const taken = new Set(packed);
        for (const { item } of order) {
          if (taken.has(item)) left -= item.tokens;
          else expect(item.tokens).toBeGreaterThan(left);
        }
      }),
    );
  });

  it('fills the budget: with room for everything, everything is returned', () => {
    fc.assert(
      fc.property(items, (list) => {
        const total = list.reduce((sum, item) => sum + item.tokens, 0);
        expect(packByRank(list, total)).toHaveLength(list.length);
      }),
    );
  });
});

describe('memoryBudgetTokens', () => {
  it('is what the usable input leaves, capped, never negative', () => {
    expect(memoryBudgetTokens(100_000, 99_000)).toBe(1_000);
    expect(memoryBudgetTokens(100_000, 120_000)).toBe(0);
    expect(memoryBudgetTokens(100_000, 1_000)).toBe(MEMORY_RESULT_MAX_TOKENS);
    expect(memoryBudgetTokens(null, 5)).toBe(MEMORY_RESULT_MAX_TOKENS);
  });
});
