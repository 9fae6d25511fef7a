import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addToBreakdown, type UsageBreakdown } from '../../core/cost';
import type { ModelCard } from '../../core/model-card';
import { budgetLine, budgetView, capStop, reservationFor, spentOf } from '../../core/spend-cap';
import { addRequestUsage, EMPTY_USAGE, type UsageTotals } from '../../core/usage';

const RUNS = 500;

const cardArb = fc.record({
  inputPerMTok: fc.double({ min: 0.01, max: 20, noNaN: true }),
  outputPerMTok: fc.double({ min: 0.01, max: 80, noNaN: true }),
  maxOutputTokens: fc.integer({ min: 1, max: 64_000 }),
});

function cardOf(c: { inputPerMTok: number; outputPerMTok: number; maxOutputTokens: number }): ModelCard {
  return {
    provider: 'openai-compatible',
    model: 'priced',
    advertisedContextTokens: 200_000,
    maxOutputTokens: c.maxOutputTokens,
    prices: {
      inputPerMTok: c.inputPerMTok,
      outputPerMTok: c.outputPerMTok,
      cacheReadPerMTok: c.inputPerMTok,
      cacheWritePerMTok: c.inputPerMTok,
    },
  };
}

/** One call: the estimate the goal made, and how far off the provider's report is (any error, both ways). */
const callArb = fc.record({
  estimate: fc.integer({ min: 0, max: 150_000 }),
  inputError: fc.double({ min: 0, max: 10, noNaN: true }),
  outputShare: fc.double({ min: 0, max: 3, noNaN: true }),
});

interface Goal {
  breakdown: UsageBreakdown;
  usage: UsageTotals;
}

/** Runs calls through the reservation rule until a cap stops them; returns what each call saw. */
function simulate(
  card: ModelCard,
  calls: Array<{ estimate: number; inputError: number; outputShare: number }>,
  caps: { maxCostUsd?: number; maxTokens?: number },
) {
  let goal: Goal = { breakdown: {}, usage: EMPTY_USAGE };
  const started: Array<{ before: ReturnType<typeof spentOf>; after: ReturnType<typeof spentOf> }> = [];
  let stopped = false;
  for (const call of calls) {
    const before = spentOf(goal);
    if (capStop(before, reservationFor(card, call.estimate), caps)) {
      stopped = true;
      break;
    }
    const usage = {
      inputTokens: Math.round(call.estimate * call.inputError),
      outputTokens: Math.round(card.maxOutputTokens * call.outputShare),
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    };
    goal = {
      breakdown: addToBreakdown(goal.breakdown, 'm', usage, { summarizer: false, card }),
      usage: addRequestUsage(goal.usage, usage),
    };
    started.push({ before, after: spentOf(goal) });
  }
  return { started, stopped, final: spentOf(goal) };
}

describe('the reservation arithmetic', () => {
  it('never goes more than one call over a money cap, whatever the estimate error', () => {
    fc.assert(
      fc.property(
        cardArb,
        fc.array(callArb, { minLength: 1, maxLength: 40 }),
        fc.double({ min: 0, max: 5, noNaN: true }),
        (c, calls, cap) => {
          const card = cardOf(c);
          const { started, final } = simulate(card, calls, { maxCostUsd: cap });
          // Every call that started did so within the cap…
          for (const call of started) expect(call.before.costUsd).toBeLessThanOrEqual(cap + 1e-9);
          // …so at most the last one ended over it, and the overshoot is that one call.
          const over = started.filter((call) => call.after.costUsd > cap + 1e-9);
          expect(over.length).toBeLessThanOrEqual(1);
          if (over.length === 1) expect(over[0]).toBe(started[started.length - 1]);
          const last = started[started.length - 1];
          if (last)
            expect(final.costUsd - cap).toBeLessThanOrEqual(last.after.costUsd - last.before.costUsd + 1e-9);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('never goes more than one call over a token cap, whatever the estimate error', () => {
    fc.assert(
      fc.property(
        cardArb,
        fc.array(callArb, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 2_000_000 }),
        (c, calls, cap) => {
          const { started } = simulate(cardOf(c), calls, { maxTokens: cap });
          for (const call of started) expect(call.before.tokens).toBeLessThanOrEqual(cap);
          const over = started.filter((call) => call.after.tokens > cap);
          expect(over.length).toBeLessThanOrEqual(1);
          if (over.length === 1) expect(over[0]).toBe(started[started.length - 1]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('never goes over at all when the estimate is right and the output stays within the card', () => {
    fc.assert(
      fc.property(
        cardArb,
        fc.array(
          fc.record({
            estimate: fc.integer({ min: 0, max: 150_000 }),
            inputError: fc.double({ min: 0, max: 1, noNaN: true }),
            outputShare: fc.double({ min: 0, max: 1, noNaN: true }),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.double({ min: 0, max: 5, noNaN: true }),
        (c, calls, cap) => {
          const { final } = simulate(cardOf(c), calls, { maxCostUsd: cap });
          expect(final.costUsd).toBeLessThanOrEqual(cap + 1e-9);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('reserves the estimated input at the input price plus the whole output ceiling at the output price', () => {
    const card = cardOf({ inputPerMTok: 2, outputPerMTok: 8, maxOutputTokens: 1_000 });
    expect(reservationFor(card, 10_000)).toEqual({ costUsd: 0.02 + 0.008, tokens: 11_000 });
    expect(reservationFor(null, 10)).toEqual({ costUsd: 0, tokens: 4_010 });
  });

  it('lets a call land exactly on the cap, and names the figures when it stops', () => {
    const spent = { costUsd: 0.1 + 0.2, tokens: 0 };
    expect(capStop(spent, { costUsd: 0.7, tokens: 0 }, { maxCostUsd: 1 })).toBeNull();
    const stop = capStop(spent, { costUsd: 0.71, tokens: 0 }, { maxCostUsd: 1 });
    expect(stop?.cap).toBe('cost');
    expect(stop?.reason).toBe(
      'budget reached: $0.3000 spent of $1.0000, and the next model call may cost up to $0.7100',
    );
    expect(capStop({ costUsd: 0, tokens: 90 }, { costUsd: 0, tokens: 11 }, { maxTokens: 100 })?.cap).toBe(
      'tokens',
    );
    expect(capStop({ costUsd: 5, tokens: 5 }, { costUsd: 5, tokens: 5 }, {})).toBeNull();
  });

  it('shows spent, reserved and cap in one line', () => {
    const view = budgetView(
      { costUsd: 0.0123, tokens: 1200 },
      { costUsd: 0.004, tokens: 300 },
      { maxCostUsd: 0.05 },
    );
    expect(budgetLine(view)).toBe(
      '$0.0123 spent, $0.0040 reserved, cap $0.0500 · 1200 tokens, 300 reserved, cap none',
    );
  });
});
