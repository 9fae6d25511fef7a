/**
 * The token levels a compaction works with, from the model's budget and the auto-compact settings:
 * the threshold that starts it, the low-water mark it aims below, and the hard limit a request must fit.
 */
import type { ContextBudget } from '../budget';
import type { AutoCompactState } from './failure-budget';
import {
  AUTO_COMPACT_TARGET_PCT_DEFAULT,
  SUMMARY_ESTIMATE_MAX_SHARE,
  SUMMARY_TOKENS_ESTIMATE,
} from './thresholds';

/** Token levels of one goal's compactions. */
export interface CompactionTargets {
  /** The model's window (the protected recent window is a fifth of it). */
  windowTokens: number;
  /** The most input one request may carry (window less the output reserve). */
  usableInputTokens: number;
  /** Auto-compact starts at this estimate. */
  thresholdTokens: number;
  /** Every compaction aims below this estimate: the low-water mark. */
  targetTokens: number;
  /** A request over this does not fit: the last-resort level. */
  hardLimitTokens: number;
}

/** The low-water mark in tokens: a share of the usable input, always below the threshold. */
export function lowWaterTokens(budget: ContextBudget, targetPct: number | undefined): number {
  const pct = targetPct ?? AUTO_COMPACT_TARGET_PCT_DEFAULT;
  const mark = Math.floor((budget.usableInputTokens * pct) / 100);
  // A mark at or over the threshold would let compaction stop where the next step starts another.
  return Math.max(0, Math.min(mark, budget.compactAtTokens - 1));
}

/** The levels for a budget and the auto-compact state (older states have no target: the default). */
export function compactionTargets(budget: ContextBudget, autoCompact: AutoCompactState): CompactionTargets {
  return {
    windowTokens: budget.windowTokens,
    usableInputTokens: budget.usableInputTokens,
    thresholdTokens: budget.compactAtTokens,
    targetTokens: lowWaterTokens(budget, autoCompact.targetPct),
    hardLimitTokens: budget.stopAtTokens,
  };
}

/**
 * The expected size of a new summary: it merges the earlier one, so at least that; otherwise the
 * typical size, bounded by a share of the usable input so small windows are not judged by large ones.
 */
export function expectedSummaryTokens(previousSummaryTokens: number, usableInputTokens: number): number {
  const typical = Math.min(
    SUMMARY_TOKENS_ESTIMATE,
    Math.floor(usableInputTokens * SUMMARY_ESTIMATE_MAX_SHARE),
  );
  return Math.max(previousSummaryTokens, typical);
}
