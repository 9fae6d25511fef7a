/**
 * Whether to compact before a model step (spec S-AUTO, S-BUDGET): past the threshold, compact; not when
 * the pressure comes from the system prompt and tool schemas (wait silently for the history to grow);
 * not twice in a row; while paused, prune only; over the hard limit, one forced compaction as a last resort.
 */
import type { AutoCompactState } from './failure-budget';
import { formatTokens } from './notice';

/**
 * What to do before the step. `prune-only`: stage 1 without a summarizer call. `compact`: prune, then
 * summarize if that is not enough. `forced`: both, keeping fewer exchanges and falling back to an
 * extracted summary if the summarizer fails. `wait`: nothing, and no transcript note.
 */
export type AutoCompactAction = 'none' | 'prune-only' | 'compact' | 'forced' | 'wait';

/** What the decision looks at. */
export interface AutoCompactInput {
  budgetState: AutoCompactState;
  /** Context pressure of the coming request (see estimatePressure), fixed tokens included. */
  estimateTokens: number;
  /** System prompt and tool schemas, which no compaction can shrink. */
  fixedTokens: number;
  thresholdTokens: number;
  /** The hard input budget (the stop level): a request over it would not fit. */
  hardLimitTokens: number;
  /** The step about to run. */
  stepNumber: number;
  /** Estimated request size after the fullest summary (summaryFloorTokens); without it only fixedTokens is judged. */
  floorTokens?: number;
}

/** The action and why, for the workflow's log. */
export interface AutoCompactDecision {
  action: AutoCompactAction;
  reason: string;
}

/** The auto-compact threshold in tokens for a window and a percentage. */
export function autoCompactThresholdTokens(windowTokens: number, thresholdPct: number): number {
  return Math.floor((windowTokens * thresholdPct) / 100);
}

/** Decides whether and how to compact before the step `stepNumber`. */
export function decideAutoCompact(input: AutoCompactInput): AutoCompactDecision {
  const { budgetState: state, estimateTokens: estimate, fixedTokens: fixed, stepNumber } = input;
  const threshold = input.thresholdTokens;
  const hard = input.hardLimitTokens;
  const pressure = `context ${formatTokens(estimate)} tokens`;
  const overHard = estimate > hard;
  if (!overHard && estimate < threshold) {
    return { action: 'none', reason: `${pressure} is under the threshold of ${formatTokens(threshold)}` };
  }
  // At most one compaction per step, forced ones included: a second could only repeat the first.
  if (state.lastCompactedAtStep === stepNumber) {
    return { action: 'none', reason: `already compacted before step ${stepNumber}` };
  }
  if (overHard) {
    if (fixed >= hard) {
      return {
        action: 'wait',
        reason: `system prompt and tool schemas alone (${formatTokens(fixed)}) exceed the hard limit of ${formatTokens(hard)}; compaction cannot help`,
      };
    }
    // The last resort: disabled or paused auto-compact does not stop it, since the request would not fit.
    return {
      action: 'forced',
      reason: `${pressure} is over the hard limit of ${formatTokens(hard)}: one forced compaction as a last resort`,
    };
  }
  if (!state.enabled) return { action: 'none', reason: 'auto-compact is off' };
  if (fixed >= threshold) {
    return {
      action: 'wait',
      reason: `the pressure comes from the system prompt and tool schemas (${formatTokens(fixed)}), not the history`,
    };
  }
  if (input.floorTokens !== undefined && input.floorTokens >= threshold) {
    return {
      action: 'wait',
      reason: `compacting the history would leave ${formatTokens(input.floorTokens)}, still over the threshold of ${formatTokens(threshold)}; waiting for the history to grow`,
    };
  }
  // Right after a compaction the new prefix is not cached yet; compacting again would cost a second miss.
  if (state.lastCompactedAtStep === stepNumber - 1) {
    return { action: 'none', reason: `compacted before step ${stepNumber - 1}; not again right away` };
  }
  if (state.paused) {
    return {
      action: 'prune-only',
      reason: `${pressure} is over the threshold, but auto-compact is paused after ${state.consecutiveFailures} failures: pruning only`,
    };
  }
  return { action: 'compact', reason: `${pressure} is over the threshold of ${formatTokens(threshold)}` };
}
