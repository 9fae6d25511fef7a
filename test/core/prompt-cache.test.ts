import { describe, expect, it } from 'vitest';
import { GENERIC_CARD, type ModelCard } from '../../core/model-card';
import { cacheReport, renderCacheReport, roundedShare } from '../../core/prompt-cache';
import { EMPTY_USAGE, type UsageTotals } from '../../core/usage';

const HAIKU: ModelCard = {
  ...GENERIC_CARD,
  provider: 'anthropic',
  model: 'claude-haiku-4-5',
  minCacheTokens: 4096,
};

function usage(fields: Partial<UsageTotals>): UsageTotals {
  return { ...EMPTY_USAGE, requests: 3, ...fields };
}

describe('cacheReport', () => {
  it('gives the read share of the input', () => {
    const report = cacheReport(
      usage({ inputTokens: 10_000, cacheReadTokens: 7_500, cacheWriteTokens: 900, contextTokens: 5_000 }),
      HAIKU,
      3_000,
    );
    expect(report).toMatchObject({
      readTokens: 7_500,
      writeTokens: 900,
      readShare: 0.75,
      belowMinimum: false,
    });
    expect(renderCacheReport(report)[0]).toBe(
      'prompt cache:     75.0% of input read from the cache (7500 read, 900 written)',
    );
  });

  it('says when no request reached the model’s minimum, which providers never report', () => {
    const report = cacheReport(usage({ inputTokens: 6_000, contextTokens: 2_500 }), HAIKU, 1_200);
    expect(report.belowMinimum).toBe(true);
    expect(report.note).toMatch(/no request reached claude-haiku-4-5's caching minimum of 4096 tokens/);
    expect(renderCacheReport(report)).toHaveLength(2);
  });

  it('says when only the fixed prefix is under the minimum', () => {
    const report = cacheReport(usage({ inputTokens: 60_000, contextTokens: 9_000 }), HAIKU, 1_200);
    expect(report.belowMinimum).toBe(false);
    expect(report.note).toMatch(/fixed prefix .*~1200 tokens.* under claude-haiku-4-5's caching minimum/);
  });

  it('says nothing of a minimum the card does not know, and has no share before any input', () => {
    const report = cacheReport(EMPTY_USAGE, GENERIC_CARD, 0);
    expect(report).toMatchObject({ readShare: null, minCacheTokens: null, belowMinimum: false, note: null });
    expect(roundedShare(EMPTY_USAGE)).toBe(0);
    expect(roundedShare({ inputTokens: 3, cacheReadTokens: 1 })).toBe(0.3333);
  });
});
