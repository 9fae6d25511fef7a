import { describe, expect, it } from 'vitest';
import { renderSummarizerShare, summarizerInputShare } from '../../../core/compaction/summarizer-share';
import { addToBreakdown } from '../../../core/cost';
import { GENERIC_CARD } from '../../../core/model-card';
import { EMPTY_USAGE } from '../../../core/usage';

const usage = (inputTokens: number) => ({
  inputTokens,
  outputTokens: 10,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

describe('summarizerInputShare', () => {
  it('is the summarizer input over all input, summarizer included', () => {
    let breakdown = addToBreakdown({}, 'm', usage(9_000), { summarizer: false, card: GENERIC_CARD });
    breakdown = addToBreakdown(breakdown, 'm', usage(1_000), { summarizer: true, card: GENERIC_CARD });
    breakdown = addToBreakdown(breakdown, 'cheap', usage(2_000), { summarizer: true, card: GENERIC_CARD });
    const share = summarizerInputShare(breakdown, { ...EMPTY_USAGE, inputTokens: 12_000 });
    expect(share).toEqual({ summarizerInputTokens: 3_000, inputTokens: 12_000, share: 0.25 });
    expect(renderSummarizerShare(share)).toBe('summarizer input: 25.0 % of input tokens (3000 of 12000)');
  });

  it('is 0 before any request', () => {
    expect(summarizerInputShare({}, EMPTY_USAGE)).toEqual({
      summarizerInputTokens: 0,
      inputTokens: 0,
      share: 0,
    });
  });
});
