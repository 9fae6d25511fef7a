/**
 * What one compaction does, decided before and after the summarizer call (spec S-COMPACT, issue 9.2):
 * prune old outputs; if that does not reach the low-water mark, summarize the span before the verbatim
 * tail when that pays, or stub the tail itself when it alone holds too much; after a summary, stub the
 * tail if the estimate is still over the mark. Every estimate is the measured pressure scaled by what
 * the plan takes out of the ledger's estimate, so provider counts stay the reference. Pure: the workflow runs the summarizer between.
 */
import type { ContextPlan } from '../context-plan';
import type { LedgerEntry } from '../ledger';
import { scaledEstimate } from './estimate';
import { planPrune, prunedContextTokens } from './prune';
import {
  applySummary,
  keptSteeringBudget,
  planSummary,
  previousSummaryTokens,
  type SteeringRule,
  type SummarySpan,
  spanShownTokens,
} from './summary-span';
import { planTailPrune } from './tail-prune';
import { type CompactionTargets, expectedSummaryTokens } from './targets';
import { SUMMARY_MIN_SPAN_SHARE } from './thresholds';

/** Why a compaction runs and under which rules. */
export interface CompactionMode {
  /** A user's `goalrun compact`: summarizes whenever there is a span. */
  manual?: boolean;
  /** A last resort (over the hard limit, or a provider overflow): two exchanges stay verbatim, not three. */
  forced?: boolean;
  /** Auto-compact is paused: no summarizer call. */
  pruneOnly?: boolean;
  /**
   * The rules before the low-water mark (goals whose history predates it): aim just under the threshold,
   * never stub the tail, summarize whenever pruning is not enough or the compaction is forced.
   */
  legacy?: boolean;
  /**
   * A summary keeps only the latest three steering messages, not every one: executions started before
   * every one was kept (workflows/compaction.ts decides with a patch), so their histories replay.
   */
  latestSteeringOnly?: boolean;
}

/** The input of a compaction plan. */
export interface CompactionInput {
  ledger: LedgerEntry[];
  plan: ContextPlan;
  /** The measured pressure of the coming request. */
  before: number;
  targets: CompactionTargets;
  fixedTokens: number;
  mode: CompactionMode;
}

/** The plan before the summarizer: pruning done, and the span to summarize if any. */
export interface PrunedCompaction {
  plan: ContextPlan;
  /** Outputs newly stubbed before the verbatim tail, and inside it. */
  stubbed: number[];
  tailStubbed: number[];
  /** Assistant messages whose large arguments are newly elided. */
  elided: number[];
  before: number;
  /** The estimate with this plan. */
  after: number;
  /** The span to summarize; null when no summarizer call is made. */
  summary: SummarySpan | null;
  /** Why no summary is made although the estimate is over the target. */
  noSummaryReason?: string;
}

/** The plan once the summary is stored. */
export interface SummarizedCompaction {
  ledger: LedgerEntry[];
  plan: ContextPlan;
  /** Outputs of the verbatim tail stubbed after the summary, since it alone was not enough. */
  tailStubbed: number[];
  after: number;
}

/** Whether a summary pays for its summarizer call by what it frees (a manual one always does). */
function worthSummarizing(shown: number, input: CompactionInput): boolean {
  return input.mode.manual === true || shown >= input.targets.usableInputTokens * SUMMARY_MIN_SPAN_SHARE;
}

/** Which steering messages a summary of this compaction keeps verbatim. */
function steeringRule(input: Pick<CompactionInput, 'targets' | 'mode'>): SteeringRule {
  if (input.mode.latestSteeringOnly) return { latestOnly: true };
  return { budgetTokens: keptSteeringBudget(input.targets.usableInputTokens) };
}

/** Stage 1, and whether and what to summarize. */
export function planCompaction(input: CompactionInput): PrunedCompaction {
  const { ledger, targets, mode } = input;
  const steering = steeringRule(input);
  const target = mode.legacy ? targets.thresholdTokens : targets.targetTokens;
  const pruned = planPrune(ledger, input.plan, {
    windowTokens: targets.windowTokens,
    thresholdTokens: targets.thresholdTokens,
    targetTokens: target,
    fixedTokens: input.fixedTokens,
    forced: mode.forced,
    estimateTokens: input.before,
    afterEstimate: mode.legacy ? 'delta' : 'scaled',
  });
  const result: PrunedCompaction = {
    plan: pruned.plan,
    stubbed: pruned.stubbed,
    tailStubbed: [],
    elided: pruned.elided,
    before: pruned.before,
    after: pruned.after,
    summary: null,
  };
  if (mode.legacy) {
    // These rules judged the pruned context by the ledger estimate alone; so they still do.
    const legacy = { ...result, after: input.fixedTokens + prunedContextTokens(ledger, pruned.plan) };
    if (mode.pruneOnly || (pruned.enough && !mode.manual && !mode.forced)) return legacy;
    return { ...legacy, summary: planSummary(ledger, pruned.plan, { forced: mode.forced, steering }) };
  }
  if (pruned.enough && !mode.manual) return result;

  const span = mode.pruneOnly ? null : planSummary(ledger, pruned.plan, { forced: mode.forced, steering });
  // Measured tokens per estimated token of the pruned context: the summary's estimates are scaled by it.
  const estimated = input.fixedTokens + prunedContextTokens(ledger, pruned.plan);
  const perEstimated = estimated > 0 ? pruned.after / estimated : 1;
  const shown = span ? spanShownTokens(ledger, pruned.plan, span) : 0;
  const previous = previousSummaryTokens(ledger, pruned.plan);
  const spanTokens = Math.round((shown - previous) * perEstimated);
  const expected = expectedSummaryTokens(previous, targets.usableInputTokens);
  const saving = span ? Math.round((shown - expected) * perEstimated) : 0;
  const worth = span !== null && worthSummarizing(spanTokens, input);

  let current = result;
  // The verbatim tail holds too much when even the summary would leave the estimate over the mark.
  if (!worth || pruned.after - saving >= target) {
    const tail = planTailPrune(ledger, pruned.plan, {
      forced: mode.forced,
      estimateTokens: pruned.after,
      fixedTokens: input.fixedTokens,
      targetTokens: target,
      hardLimitTokens: targets.hardLimitTokens,
      laterSavingTokens: worth ? saving : 0,
    });
    current = { ...current, plan: tail.plan, tailStubbed: tail.stubbed, after: tail.after };
    if (tail.after < target && !mode.manual) return current;
  }
  // A request that would still not fit is summarized whatever the span holds: it is the last resort.
  if (span && (worth || current.after > targets.hardLimitTokens)) return { ...current, summary: span };
  const noSummaryReason = mode.pruneOnly
    ? 'auto-compact is paused'
    : span
      ? `the span before the last exchanges holds only ${spanTokens} tokens`
      : 'nothing before the last exchanges to summarize';
  return { ...current, noSummaryReason };
}

/** Applies a stored summary, then stubs the verbatim tail if the estimate is still over the mark. */
export function completeSummary(
  input: CompactionInput,
  pruned: PrunedCompaction,
  summaryEntry: LedgerEntry,
): SummarizedCompaction {
  const span = pruned.summary;
  if (!span) throw new Error('completeSummary needs a plan with a span to summarize');
  const applied = applySummary(input.ledger, pruned.plan, summaryEntry, span);
  const shownBefore = prunedContextTokens(input.ledger, pruned.plan);
  const shownAfter = prunedContextTokens(applied.ledger, applied.plan);
  if (input.mode.legacy) {
    return { ...applied, tailStubbed: [], after: input.fixedTokens + shownAfter };
  }
  const fixed = input.fixedTokens;
  const after = scaledEstimate(pruned.after, fixed + shownBefore, fixed + shownAfter);
  if (after < input.targets.targetTokens) return { ...applied, tailStubbed: [], after };
  const tail = planTailPrune(applied.ledger, applied.plan, {
    forced: input.mode.forced,
    estimateTokens: after,
    fixedTokens: fixed,
    targetTokens: input.targets.targetTokens,
    hardLimitTokens: input.targets.hardLimitTokens,
  });
  return { ledger: applied.ledger, plan: tail.plan, tailStubbed: tail.stubbed, after: tail.after };
}

/**
 * The estimate after the fullest compaction (every output stubbed but the newest exchange's, and a
 * summary of the span): if even this is over the threshold, compacting cannot help yet.
 */
export function compactionFloorTokens(
  input: Omit<CompactionInput, 'mode'> & { mode?: Pick<CompactionMode, 'latestSteeringOnly'> },
): number {
  const fullest = planCompaction({
    ...input,
    targets: { ...input.targets, targetTokens: 0 },
    mode: { manual: true, latestSteeringOnly: input.mode?.latestSteeringOnly },
  });
  if (!fullest.summary) return fullest.after;
  const shown = spanShownTokens(input.ledger, fullest.plan, fullest.summary);
  const previous = previousSummaryTokens(input.ledger, fullest.plan);
  const expected = expectedSummaryTokens(previous, input.targets.usableInputTokens);
  const estimated = input.fixedTokens + prunedContextTokens(input.ledger, fullest.plan);
  return scaledEstimate(fullest.after, estimated, Math.max(0, estimated - shown + expected));
}
