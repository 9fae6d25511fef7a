/**
 * The summarizer's share of a goal's input tokens (issue 9.2), for `goalrun stats`: compaction that
 * thrashes shows up here first, since every summary re-reads a large part of the context.
 */
import { breakdownTotal, type UsageBreakdown } from '../cost';
import type { UsageTotals } from '../usage';

/** Input tokens the summarizer read, against all input tokens of the goal (summarizer included). */
export interface SummarizerShare {
  summarizerInputTokens: number;
  inputTokens: number;
  /** summarizerInputTokens ÷ inputTokens, 0 when nothing was read; rounded to four decimals. */
  share: number;
}

/** The share from the per-model breakdown (summarizer usage marked) and the goal's totals. */
export function summarizerInputShare(breakdown: UsageBreakdown, totals: UsageTotals): SummarizerShare {
  const summarizerInputTokens = breakdownTotal(breakdown).summarizer.inputTokens;
  const inputTokens = Math.max(totals.inputTokens, summarizerInputTokens);
  const share = inputTokens > 0 ? Math.round((summarizerInputTokens / inputTokens) * 10_000) / 10_000 : 0;
  return { summarizerInputTokens, inputTokens, share };
}

/** E.g. `summarizer input: 12.5 % of input tokens (1500 of 12000)`. */
export function renderSummarizerShare(share: SummarizerShare): string {
  const pct = (share.share * 100).toFixed(1);
  return `summarizer input: ${pct} % of input tokens (${share.summarizerInputTokens} of ${share.inputTokens})`;
}
