/**
 * The decision sequence of compaction, without I/O: whether to compact before a step, what one
 * compaction prunes and asks the summarizer, and what its outcome does to the compaction state. The
 * workflow (workflows/compaction.ts) runs it around the summarize activity; the tests' simulator runs it
 * around a fake summarizer. One sequence for both, so the simulator cannot drift from the workflow.
 */
import type { LedgerEntry } from '../ledger';
import { messageCount } from '../ledger';
import type { RequestUsage } from '../usage';
import {
  type CompactionInput,
  compactionFloorTokens,
  completeSummary,
  type PrunedCompaction,
  planCompaction,
} from './compaction-plan';
import { type AutoCompactDecision, decideAutoCompact } from './decide';
import { estimatePressure, tokensAppendedSince } from './estimate';
import { recordCompactionSuccess, recordPruneOnly, recordSummarizerFailure } from './failure-budget';
import { compactionNotice } from './notice';
import { prunedContextTokens } from './prune';
import { shortfallReason } from './shortfall';
import type { CompactionState } from './state';
import { spanRanges, summaryFloorTokens } from './summary-span';
import { type CompactionTargets, compactionTargets } from './targets';
import { SUMMARIZER_INPUT_SHARE } from './thresholds';

/** Why a compaction runs (the workflow's CompactionRequest, without the focus topic). */
export interface CompactionRunRequest {
  /** A user's `goalrun compact`. */
  manual?: boolean;
  /** A last resort (over the hard limit, or a provider overflow). */
  forced?: boolean;
  /** Recovering from a provider overflow: the request did not fit, whatever the estimate says. */
  recovery?: boolean;
  /** Auto-compact is paused: no summarizer call. */
  pruneOnly?: boolean;
}

/** Context pressure of the coming request: the last reported input plus what was appended since. */
export function pressureOf(compaction: CompactionState, ledger: LedgerEntry[]): number {
  if (compaction.lastInputTokens === 0)
    return compaction.fixedTokens + prunedContextTokens(ledger, compaction.plan);
  return estimatePressure({
    lastReportedInputTokens: compaction.lastInputTokens,
    tokensAppendedSince: tokensAppendedSince(ledger, compaction.lastCoveredSeq),
  });
}

/**
 * The auto-compact decision before step `stepNumber` (spec S-AUTO), or null before the model's budget
 * is known. `legacy`: the rules before the low-water mark, for comparison in tests.
 */
export function autoCompactDecision(input: {
  compaction: CompactionState;
  ledger: LedgerEntry[];
  estimateTokens: number;
  stepNumber: number;
  legacy?: boolean;
  /** Goals started before every steering message was kept: only the latest three are (see patches). */
  latestSteeringOnly?: boolean;
}): AutoCompactDecision | null {
  const { compaction, ledger, estimateTokens: estimate } = input;
  if (!compaction.budget) return null;
  const targets = compactionTargets(compaction.budget, compaction.autoCompact);
  const { plan, fixedTokens } = compaction;
  // The floor only matters over the threshold, and costs a full planning pass to compute.
  const floorTokens =
    estimate < targets.thresholdTokens
      ? undefined
      : input.legacy
        ? summaryFloorTokens(ledger, plan, { fixedTokens })
        : compactionFloorTokens({
            ledger,
            plan,
            before: estimate,
            targets,
            fixedTokens,
            mode: { latestSteeringOnly: input.latestSteeringOnly },
          });
  return decideAutoCompact({
    budgetState: compaction.autoCompact,
    estimateTokens: estimate,
    fixedTokens,
    thresholdTokens: targets.thresholdTokens,
    hardLimitTokens: targets.hardLimitTokens,
    stepNumber: input.stepNumber,
    floorTokens,
  });
}

/** The compaction an auto-compact action runs; null when it runs none. */
export function autoCompactRequest(action: AutoCompactDecision['action']): CompactionRunRequest | null {
  switch (action) {
    case 'none':
    case 'wait':
      return null;
    case 'prune-only':
      return { pruneOnly: true };
    case 'compact':
      return {};
    case 'forced':
      return { forced: true };
  }
}

/** A compaction planned up to the summarizer call. */
export interface PlannedCompaction {
  request: CompactionRunRequest;
  /** The compaction state it started from. */
  compaction: CompactionState;
  ledger: LedgerEntry[];
  targets: CompactionTargets;
  /** The pressure it starts from (for a recovery, at least over the hard limit). */
  before: number;
  input: CompactionInput;
  pruned: PrunedCompaction;
}

/** Plans a compaction (spec S-COMPACT): pruning, and the span to summarize if any. Needs a budget. */
export function planCompactionRun(input: {
  compaction: CompactionState;
  ledger: LedgerEntry[];
  measured: number;
  request: CompactionRunRequest;
  legacy?: boolean;
  /** Goals started before every steering message was kept: only the latest three are (see patches). */
  latestSteeringOnly?: boolean;
}): PlannedCompaction {
  const { compaction, ledger, request } = input;
  if (!compaction.budget) throw new Error('planCompactionRun needs the model budget');
  const targets = compactionTargets(compaction.budget, compaction.autoCompact);
  // The provider said the request does not fit, whatever the estimate says: only reductions are trusted.
  const before =
    request.recovery && !input.legacy
      ? Math.max(input.measured, targets.hardLimitTokens + 1)
      : input.measured;
  const planInput: CompactionInput = {
    ledger,
    plan: compaction.plan,
    before,
    targets,
    fixedTokens: compaction.fixedTokens,
    mode: {
      manual: request.manual,
      forced: request.forced,
      pruneOnly: request.pruneOnly,
      latestSteeringOnly: input.latestSteeringOnly,
      ...(input.legacy ? { legacy: true } : {}),
    },
  };
  const pruned = planCompaction(planInput);
  return { request, compaction, ledger, targets, before, input: planInput, pruned };
}

/** What the summarizer is asked for a planned compaction with a span; null when it has none. */
export function summaryRequestOf(planned: PlannedCompaction): {
  compaction: number;
  spanRanges: Array<[number, number]>;
  previousSummarySeq?: number;
  maxInputTokens: number;
} | null {
  const span = planned.pruned.summary;
  if (!span) return null;
  return {
    compaction: planned.compaction.compactions + 1,
    spanRanges: spanRanges(planned.ledger, span),
    previousSummarySeq: span.previousSummarySeq,
    maxInputTokens: Math.floor(planned.targets.usableInputTokens * SUMMARIZER_INPUT_SHARE),
  };
}

/** The new compaction state, the pressure it leaves and the notice that says so. */
export interface CompactionStep {
  compaction: CompactionState;
  pressure: number;
  note: string;
}

function noticeOf(
  planned: PlannedCompaction,
  after: number,
  summarized: number,
  tailStubbed: number[],
  why: () => string,
): string {
  const { pruned, targets } = planned;
  return compactionNotice({
    before: planned.before,
    after,
    stubbed: pruned.stubbed.length + tailStubbed.length,
    tailStubbed: tailStubbed.length,
    elided: pruned.elided.length,
    summarized,
    forced: planned.request.forced,
    targetTokens: targets.targetTokens,
    shortOfTarget: after >= targets.targetTokens ? why() : undefined,
  });
}

/** A compaction without a summary: its pruning applied, or null when it prunes nothing. */
export function prunedOutcome(planned: PlannedCompaction, stepNumber: number): CompactionStep | null {
  const { pruned, compaction } = planned;
  if (pruned.stubbed.length + pruned.tailStubbed.length + pruned.elided.length === 0) return null;
  const note = noticeOf(planned, pruned.after, 0, pruned.tailStubbed, () =>
    shortfallReason(
      planned.ledger,
      pruned.plan,
      compaction.fixedTokens,
      pruned.after,
      pruned.noSummaryReason,
    ),
  );
  return {
    compaction: {
      ...compaction,
      plan: pruned.plan,
      autoCompact: recordPruneOnly(compaction.autoCompact, stepNumber),
    },
    pressure: pruned.after,
    note,
  };
}

/** The compaction counters after a summarizer call (its usage counted once). */
export function countSummary(compaction: CompactionState, usage: RequestUsage | null): CompactionState {
  return {
    ...compaction,
    compactions: compaction.compactions + 1,
    summarizerRequests: compaction.summarizerRequests + (usage ? 1 : 0),
    summarizerTokens: compaction.summarizerTokens + (usage ? usage.inputTokens + usage.outputTokens : 0),
  };
}

/** What the summarize activity (or the simulator's summarizer) returned. */
export interface SummaryFacts {
  entry: LedgerEntry;
  usage: RequestUsage | null;
  extracted: boolean;
  /** False when the new summary dropped the earlier one; absent from older workers. */
  carriesPrevious?: boolean;
}

/** What a stored summary does: applied, discarded (it would not shrink the context), or refused. */
export type SummaryOutcome =
  | { kind: 'dropped-previous'; reason: string }
  | ({ kind: 'discarded' } & CompactionStep)
  | ({ kind: 'summarized'; ledger: LedgerEntry[] } & CompactionStep);

/** Applies a stored summary to a planned compaction (spec S-COMPACT stage 2). */
export function summaryOutcome(
  planned: PlannedCompaction,
  result: SummaryFacts,
  stepNumber: number,
): SummaryOutcome {
  const { pruned, compaction, before } = planned;
  const span = pruned.summary;
  if (!span) throw new Error('summaryOutcome needs a plan with a span to summarize');
  if (span.previousSummarySeq !== undefined && result.carriesPrevious === false) {
    // A summary that dropped the earlier one would lose its facts: keep the earlier one instead.
    return { kind: 'dropped-previous', reason: 'the new summary did not carry the earlier one' };
  }
  const done = completeSummary(planned.input, pruned, result.entry);
  const withUsage = countSummary(compaction, result.usage);
  if (done.after >= before && !planned.request.forced) {
    return {
      kind: 'discarded',
      compaction: { ...withUsage, plan: pruned.plan },
      pressure: pruned.after,
      note: `compaction discarded: it would not shrink the context (${before} → ${done.after} tokens)`,
    };
  }
  const inSpan = new Set(span.spanSeqs);
  const note = noticeOf(
    planned,
    done.after,
    messageCount(planned.ledger.filter((entry) => inSpan.has(entry.seq))),
    [...pruned.tailStubbed, ...done.tailStubbed],
    () => shortfallReason(done.ledger, done.plan, compaction.fixedTokens, done.after),
  );
  return {
    kind: 'summarized',
    ledger: done.ledger,
    compaction: {
      ...withUsage,
      plan: done.plan,
      autoCompact: recordCompactionSuccess(withUsage.autoCompact, stepNumber),
    },
    pressure: done.after,
    note: result.extracted ? `${note} (summary extracted from the transcript: the summarizer failed)` : note,
  };
}

/** A summarizer failure: counted against the budget and noted; the pruning still applies (spec S-BUDGET). */
export function summarizerFailureOutcome(
  compaction: CompactionState,
  pruned: PrunedCompaction,
  reason: string,
  sessionId: string,
  manual = false,
): CompactionStep {
  const failed = recordSummarizerFailure(compaction.autoCompact, reason, sessionId, manual);
  return {
    compaction: { ...compaction, plan: pruned.plan, autoCompact: failed.state },
    pressure: pruned.after,
    note: failed.note,
  };
}
