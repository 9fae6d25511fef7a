/**
 * Compaction inside the goal workflow: the auto-compact check before each model step, manual
 * `compact`, and forced compaction on a provider context overflow. The decisions are pure functions
 * in core/compaction (compaction-decisions.ts); this module runs them and the summarize activity. Every
 * compaction aims below the low-water mark, so compactions are spaced out, and merges the earlier
 * summary, so no fact a summary carried disappears.
 */
import { isCancellation, log } from '@temporalio/workflow';
import type { SummarizeInput, SummarizeResult } from '../activities/compaction-activities';
import type { ModelBudget, ModelBudgetInput } from '../activities/model-budget';
import {
  autoCompactDecision,
  autoCompactRequest,
  planCompactionRun,
  prunedOutcome,
  summarizerFailureOutcome,
  summaryOutcome,
  summaryRequestOf,
} from '../core/compaction/compaction-decisions';
import type { PrunedCompaction } from '../core/compaction/compaction-plan';
import { type CompactionState, summarizerCardOf } from '../core/compaction/state';
import type { GoalState } from '../core/goal';
import type { ModelCard } from '../core/model-card';
import { type BilledAttempts, type CallPricing, callPricing } from '../core/paid-calls';
import { reservationFor } from '../core/spend-cap';
import { storeActivities, summarizerActivities } from './activities-proxy';
import {
  type CompactionHost,
  type CompactionRequest,
  type CompactionResult,
  compactionKind,
  compactionOf,
  countSummarizerRequest,
  currentPressure,
  mergingHost,
  notify,
  setCompaction,
  withSummarizerUsage,
} from './compaction-host';
import { innermostMessage } from './failures';

export {
  type CompactionHost,
  type CompactionRequest,
  type CompactionResult,
  type CompactionStage,
  compactionOf,
  currentPressure,
} from './compaction-host';

/** Resolves the model's budget when the state has none yet (first step of an execution). */
export async function ensureBudget(host: CompactionHost): Promise<void> {
  const state = host.get();
  const compaction = compactionOf(state);
  const request = budgetRequestOf(state);
  if (!request) {
    if (!state.compaction) host.set({ ...state, compaction });
    return;
  }
  const resolved = await stored(host, 'resolveModelBudget', () =>
    storeActivities.resolveModelBudget(request),
  );
  applyBudget(host, resolved, compaction);
}

/** What resolving the state's model budget takes; null when the state has its budget. */
export function budgetRequestOf(state: GoalState): ModelBudgetInput | null {
  const compaction = compactionOf(state);
  if (compaction.budget) return null;
  return {
    model: state.goal.model,
    baseUrl: state.goal.baseUrl,
    contextWindowTokens: state.goal.contextWindowTokens,
    thresholdPct: compaction.autoCompact.thresholdPct,
    // For the project's own cards (`.goalrun/cards`).
    workspace: state.goal.workspace,
    // Its card prices the summaries (issue 24 item 4).
    summarizerModel: state.goal.summarizerModel,
  };
}

/**
 * Keeps a resolved budget and card in the state; `before` is the compaction state the request was
 * made from (a host that merges concurrent changes takes the current one instead).
 */
export function applyBudget(host: CompactionHost, resolved: ModelBudget, before: CompactionState): void {
  if (resolved.warning) log.warn(resolved.warning);
  const current = host.get();
  // Only the budget and the card are applyBudget's: the rest is written as it is now.
  const { summarizerCard: _earlier, ...base } = host.mergesConcurrentChanges ? compactionOf(current) : before;
  let next: GoalState = {
    ...current,
    compaction: {
      ...base,
      budget: resolved.budget,
      card: resolved.card,
      ...(resolved.summarizerCard ? { summarizerCard: resolved.summarizerCard } : {}),
    },
  };
  // Said once, in `status` and at start, not in every recent-actions list and kept-progress summary.
  if (resolved.warning) next = { ...next, modelNote: resolved.warning };
  host.set(next);
}

/** The auto-compact check before a model step (spec S-AUTO). */
export async function autoCompact(
  host: CompactionHost,
  stepNumber: number,
): Promise<CompactionResult | null> {
  const state = host.get();
  const decision = autoCompactDecision({
    compaction: compactionOf(state),
    ledger: state.ledger,
    estimateTokens: currentPressure(state),
    stepNumber,
    latestSteeringOnly: host.latestSteeringOnly,
  });
  const request = decision ? autoCompactRequest(decision.action) : null;
  return request ? compact(host, stepNumber, request) : null;
}

/**
 * Runs a compaction (spec S-COMPACT): prune; summarize when pruning does not reach the low-water mark
 * and a summary pays; stub the last exchanges when they alone hold too much. The decisions are
 * core/compaction/compaction-decisions.ts; this runs the summarizer between them and stores the result.
 */
export async function compact(
  host: CompactionHost,
  stepNumber: number,
  request: CompactionRequest & { pruneOnly?: boolean },
): Promise<CompactionResult> {
  const start = host.get();
  const compaction = compactionOf(start);
  const measured = currentPressure(start);
  if (!compaction.budget) return { stage: 'none', beforeTokens: measured, afterTokens: measured, note: null };

  const planned = planCompactionRun({
    compaction,
    ledger: start.ledger,
    measured,
    request,
    latestSteeringOnly: host.latestSteeringOnly,
  });
  const { before, pruned } = planned;
  const summaryRequest = summaryRequestOf(planned);
  if (!summaryRequest) {
    const outcome = prunedOutcome(planned, stepNumber);
    if (!outcome) return { stage: 'none', beforeTokens: before, afterTokens: before, note: null };
    setCompaction(host, outcome.compaction, outcome.pressure);
    await notify(host, outcome.note, {
      beforeTokens: before,
      afterTokens: outcome.pressure,
      kind: compactionKind(request),
    });
    return { stage: 'pruned', beforeTokens: before, afterTokens: outcome.pressure, note: outcome.note };
  }

  // The summarizer's calls are priced and reserved on its own card (issue 24 item 4).
  let summarizerCard = summarizerCardOf(compaction);
  const pricing = callPricing(summarizerCard, summaryRequest.maxInputTokens);
  let summarizeInput = {
    sessionId: start.goal.sessionId,
    compaction: summaryRequest.compaction,
    spanRanges: summaryRequest.spanRanges,
    previousSummarySeq: summaryRequest.previousSummarySeq,
    focus: request.topic,
    model: start.goal.summarizerModel ?? start.goal.model,
    baseUrl: start.goal.baseUrl,
    ...(start.goal.apiKeyEnv ? { apiKeyEnv: start.goal.apiKeyEnv } : {}),
    maxInputTokens: summaryRequest.maxInputTokens,
    pricing,
  };
  // A goal at its money or token cap makes no summarizer call either (issue 18); the step's own check stops it.
  if (host.budgetAllows && !host.budgetAllows(summaryRequest.maxInputTokens, summarizerCard)) {
    return { stage: 'none', beforeTokens: before, afterTokens: before, note: null };
  }
  // Commands carried out while the summarizer runs keep their effect (mergingHost).
  const after = mergingHost(host, start);
  let called = await callSummarizer(host, after, summarizeInput, request, summarizerCard);
  // A summarizer model that is down fails over to the goal's model (failover.ts), on its card.
  const fallback =
    called.kind === 'failed' ? host.summarizerFallback?.(summarizeInput.model, called.error) : null;
  if (fallback) {
    summarizerCard = fallback.card;
    summarizeInput = {
      ...summarizeInput,
      model: fallback.model,
      baseUrl: fallback.baseUrl,
      pricing: callPricing(fallback.card, summaryRequest.maxInputTokens),
    };
    called = await callSummarizer(host, after, summarizeInput, request, summarizerCard);
  }
  if (called.kind === 'refused') {
    return { stage: 'none', beforeTokens: before, afterTokens: before, note: null };
  }
  let result: SummarizeResult;
  if (called.kind === 'answered') {
    result = called.result;
  } else if (request.recovery) {
    // Recovering from an overflow: a summary extracted from the transcript beats a failed run.
    result = await stored(host, 'summarize', () =>
      storeActivities.summarize({ ...summarizeInput, extracted: true }),
    );
  } else {
    // The failed request is counted (issue 16: a failing `compact` showed nowhere in `stats`).
    if (host.mergesConcurrentChanges && !called.billed) {
      countFailedSummarizerRequest(after, summarizeInput.model, compaction);
    }
    return summarizerFailed(after, pruned, called.reason, before, request);
  }
  const outcome = summaryOutcome(planned, result, stepNumber);
  // A summary made and then not used was still paid for (new-mode runs count it; older ones did not).
  const paidFor = (state: GoalState) =>
    host.mergesConcurrentChanges
      ? withSummarizerUsage(state, summarizeInput.model, result.usage, summarizerCard)
      : state;
  if (outcome.kind === 'dropped-previous') {
    if (host.mergesConcurrentChanges) {
      const state = paidFor(after.get());
      after.set({ ...state, compaction: countSummarizerRequest(compactionOf(state), result.usage) });
    }
    return summarizerFailed(after, pruned, outcome.reason, before, request);
  }
  if (outcome.kind === 'discarded') {
    after.set(paidFor(after.get()));
    setCompaction(after, outcome.compaction, outcome.pressure);
    await notify(after, outcome.note);
    return { stage: 'discarded', beforeTokens: before, afterTokens: outcome.pressure, note: outcome.note };
  }
  after.set({
    ...withSummarizerUsage(after.get(), summarizeInput.model, result.usage, summarizerCard),
    ledger: outcome.ledger,
  });
  setCompaction(after, outcome.compaction, outcome.pressure);
  await notify(after, outcome.note, {
    beforeTokens: before,
    afterTokens: outcome.pressure,
    kind: compactionKind(request),
  });
  return { stage: 'summarized', beforeTokens: before, afterTokens: outcome.pressure, note: outcome.note };
}

/** A summarizer failure: counted against the budget and noted; the pruning still applies. */
async function summarizerFailed(
  host: CompactionHost,
  pruned: PrunedCompaction,
  reason: string,
  before: number,
  request: CompactionRequest,
): Promise<CompactionResult> {
  const state = host.get();
  // A user's `compact` is named as such in the note; only new-mode runs word it so (same notes on replay).
  const manual = host.mergesConcurrentChanges && request.manual === true;
  const failed = summarizerFailureOutcome(compactionOf(state), pruned, reason, state.goal.sessionId, manual);
  // Pruning still helps while the summarizer is down; the next step tries again (spec S-BUDGET).
  setCompaction(host, failed.compaction, failed.pressure);
  await notify(host, failed.note);
  return { stage: 'failed', beforeTokens: before, afterTokens: failed.pressure, note: failed.note };
}

/** How a summarizer call went: answered, failed (the reason; whether it was billed), or refused by the daily budget. */
type SummarizerCall =
  | { kind: 'answered'; result: SummarizeResult }
  | { kind: 'failed'; reason: string; billed: boolean; error?: unknown }
  | { kind: 'refused' };

/**
 * The summarize activity, holding its worst case against the store-wide daily budget while it runs
 * (a refusal makes no call; the step's daily gate then waits), with what it was billed besides its
 * answer counted on the summarizer's card (issue 24 item 4). A cancellation is rethrown.
 */
async function callSummarizer(
  host: CompactionHost,
  after: CompactionHost,
  input: SummarizeInput & { model: string; pricing: CallPricing; maxInputTokens: number },
  request: CompactionRequest,
  card: ModelCard | null,
): Promise<SummarizerCall> {
  const hold = host.holdDaily
    ? await host.holdDaily(input.model, reservationFor(card, input.maxInputTokens).costUsd)
    : null;
  // A summary extracted from the transcript needs no call: an overflow still recovers.
  if (hold?.refused)
    return request.recovery ? { kind: 'failed', reason: 'daily budget', billed: false } : { kind: 'refused' };
  try {
    const result = await host.serve(
      host.onHost(
        (placement) => summarizerActivities(placement).summarize(input),
        // A call lost with the foreground host is made again: what it was billed counts now.
        async (lost) => {
          const billed = host.billedOnFailure
            ? await host.billedOnFailure(lost, input.model, input.pricing)
            : null;
          if (billed) countSummarizerBilled(after, input.model, billed, card);
        },
      ),
    );
    await hold?.release();
    if (result.billed) countSummarizerBilled(after, input.model, result.billed, card);
    return { kind: 'answered', result };
  } catch (err) {
    // What the failed call was billed, when the provider had begun to answer it (runs of PATCH.paidCalls).
    const billed = host.billedOnFailure ? await host.billedOnFailure(err, input.model, input.pricing) : null;
    await hold?.release();
    if (billed) countSummarizerBilled(after, input.model, billed, card);
    if (isCancellation(err)) throw err;
    return { kind: 'failed', reason: innermostMessage(err), billed: billed !== null, error: err };
  }
}

/**
 * Counts summarizer requests the provider billed without a summary (priced by the ledger already):
 * as summarizer requests of the goal, against its caps.
 */
function countSummarizerBilled(
  host: CompactionHost,
  model: string,
  billed: BilledAttempts,
  card: ModelCard | null,
): void {
  const state = withSummarizerUsage(host.get(), model, billed.usage, card, billed);
  host.set({ ...state, compaction: countSummarizerRequest(compactionOf(state), billed.usage) });
}

/** Counts a summarizer request that failed: no tokens are known, but the request was made. */
function countFailedSummarizerRequest(
  host: CompactionHost,
  model: string,
  compaction: ReturnType<typeof compactionOf>,
): void {
  const state = withSummarizerUsage(host.get(), model, NO_TOKENS, compaction.card);
  host.set({ ...state, compaction: countSummarizerRequest(compactionOf(state), null) });
}

const NO_TOKENS = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** A store call of the compaction, waiting out a store outage where the host can (store-wait.ts). */
function stored<T>(host: CompactionHost, what: string, call: () => Promise<T>): Promise<T> {
  return host.untilStored ? host.untilStored(what, call) : call();
}
