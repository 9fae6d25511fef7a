/**
 * Compaction inside the goal workflow: the auto-compact check before each model step, manual
 * `compact`, and forced compaction on a provider context overflow. The decisions are pure functions
 * in core/compaction (compaction-plan.ts); this module runs them and the summarize activity. Every
 * compaction aims below the low-water mark, so compactions are spaced out, and merges the earlier
 * summary, so no fact a summary carried disappears.
 */
import { isCancellation, log } from '@temporalio/workflow';
import type { SummarizeResult } from '../activities/compaction-activities';
import {
  type CompactionInput,
  compactionFloorTokens,
  completeSummary,
  type PrunedCompaction,
  planCompaction,
} from '../core/compaction/compaction-plan';
import { decideAutoCompact } from '../core/compaction/decide';
import {
  recordCompactionSuccess,
  recordPruneOnly,
  recordSummarizerFailure,
} from '../core/compaction/failure-budget';
import { compactionNotice } from '../core/compaction/notice';
import { shortfallReason } from '../core/compaction/shortfall';
import { spanRanges } from '../core/compaction/summary-span';
import { compactionTargets } from '../core/compaction/targets';
import type { GoalState } from '../core/goal';
import { messageCount } from '../core/ledger';
import { storeActivities, summarizerActivities } from './activities-proxy';
import {
  type CompactionHost,
  type CompactionRequest,
  type CompactionResult,
  compactionKind,
  compactionOf,
  countSummary,
  currentPressure,
  notify,
  SUMMARIZER_INPUT_SHARE,
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
  if (compaction.budget) {
    if (!state.compaction) host.set({ ...state, compaction });
    return;
  }
  const resolved = await storeActivities.resolveModelBudget({
    model: state.goal.model,
    baseUrl: state.goal.baseUrl,
    contextWindowTokens: state.goal.contextWindowTokens,
    thresholdPct: compaction.autoCompact.thresholdPct,
  });
  if (resolved.warning) log.warn(resolved.warning);
  let next: GoalState = {
    ...host.get(),
    compaction: { ...compaction, budget: resolved.budget, card: resolved.card },
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
  const compaction = compactionOf(state);
  const budget = compaction.budget;
  if (!budget) return null;
  const estimate = currentPressure(state);
  const targets = compactionTargets(budget, compaction.autoCompact);
  const { ledger, plan } = { ledger: state.ledger, plan: compaction.plan };
  const fixedTokens = compaction.fixedTokens;
  // The floor only matters over the threshold, and costs a full planning pass to compute.
  const over = estimate >= targets.thresholdTokens;
  const floorTokens = over
    ? compactionFloorTokens({
        ledger,
        plan,
        before: estimate,
        targets,
        fixedTokens,
        mode: { latestSteeringOnly: host.latestSteeringOnly },
      })
    : undefined;
  const decision = decideAutoCompact({
    budgetState: compaction.autoCompact,
    estimateTokens: estimate,
    fixedTokens,
    thresholdTokens: targets.thresholdTokens,
    hardLimitTokens: targets.hardLimitTokens,
    stepNumber,
    floorTokens,
  });
  switch (decision.action) {
    case 'none':
    case 'wait':
      return null;
    case 'prune-only':
      return compact(host, stepNumber, { pruneOnly: true });
    case 'compact':
      return compact(host, stepNumber, {});
    case 'forced':
      return compact(host, stepNumber, { forced: true });
  }
}

/**
 * Runs a compaction (spec S-COMPACT): prune; summarize when pruning does not reach the low-water mark
 * and a summary pays; stub the last exchanges when they alone hold too much.
 */
export async function compact(
  host: CompactionHost,
  stepNumber: number,
  request: CompactionRequest & { pruneOnly?: boolean },
): Promise<CompactionResult> {
  const start = host.get();
  const compaction = compactionOf(start);
  const budget = compaction.budget;
  const measured = currentPressure(start);
  if (!budget) return { stage: 'none', beforeTokens: measured, afterTokens: measured, note: null };

  const targets = compactionTargets(budget, compaction.autoCompact);
  // The provider said the request does not fit, whatever the estimate says: only reductions are trusted.
  const before = request.recovery ? Math.max(measured, targets.hardLimitTokens + 1) : measured;
  const input: CompactionInput = {
    ledger: start.ledger,
    plan: compaction.plan,
    before,
    targets,
    fixedTokens: compaction.fixedTokens,
    mode: {
      manual: request.manual,
      forced: request.forced,
      pruneOnly: request.pruneOnly,
      latestSteeringOnly: host.latestSteeringOnly,
    },
  };
  const pruned = planCompaction(input);
  const notice = (after: number, summarized: number, tailStubbed: number[], why: () => string) =>
    compactionNotice({
      before,
      after,
      stubbed: pruned.stubbed.length + tailStubbed.length,
      tailStubbed: tailStubbed.length,
      elided: pruned.elided.length,
      summarized,
      forced: request.forced,
      targetTokens: targets.targetTokens,
      shortOfTarget: after >= targets.targetTokens ? why() : undefined,
    });

  if (!pruned.summary) {
    const prunedAny = pruned.stubbed.length + pruned.tailStubbed.length + pruned.elided.length > 0;
    if (!prunedAny) return { stage: 'none', beforeTokens: before, afterTokens: before, note: null };
    const note = notice(pruned.after, 0, pruned.tailStubbed, () =>
      shortfallReason(
        start.ledger,
        pruned.plan,
        compaction.fixedTokens,
        pruned.after,
        pruned.noSummaryReason,
      ),
    );
    setCompaction(
      host,
      { ...compaction, plan: pruned.plan, autoCompact: recordPruneOnly(compaction.autoCompact, stepNumber) },
      pruned.after,
    );
    await notify(host, note, {
      beforeTokens: before,
      afterTokens: pruned.after,
      kind: compactionKind(request),
    });
    return { stage: 'pruned', beforeTokens: before, afterTokens: pruned.after, note };
  }

  const span = pruned.summary;
  const summarizeInput = {
    sessionId: start.goal.sessionId,
    compaction: compaction.compactions + 1,
    spanRanges: spanRanges(start.ledger, span),
    previousSummarySeq: span.previousSummarySeq,
    focus: request.topic,
    model: start.goal.summarizerModel ?? start.goal.model,
    baseUrl: start.goal.baseUrl,
    maxInputTokens: Math.floor(budget.usableInputTokens * SUMMARIZER_INPUT_SHARE),
  };
  let result: SummarizeResult;
  try {
    result = await summarizerActivities.summarize(summarizeInput);
  } catch (err) {
    if (isCancellation(err)) throw err;
    if (!request.recovery) return summarizerFailed(host, pruned, innermostMessage(err), before);
    // Recovering from an overflow: a summary extracted from the transcript beats a failed run.
    result = await storeActivities.summarize({ ...summarizeInput, extracted: true });
  }
  if (span.previousSummarySeq !== undefined && result.carriesPrevious === false) {
    // A summary that dropped the earlier one would lose its facts: keep the earlier one instead.
    return summarizerFailed(host, pruned, 'the new summary did not carry the earlier one', before);
  }

  const done = completeSummary(input, pruned, result.entry);
  const withUsage = countSummary(compaction, result.usage);
  if (done.after >= before && !request.forced) {
    const note = `compaction discarded: it would not shrink the context (${before} → ${done.after} tokens)`;
    setCompaction(host, { ...withUsage, plan: pruned.plan }, pruned.after);
    await notify(host, note);
    return { stage: 'discarded', beforeTokens: before, afterTokens: pruned.after, note };
  }
  const tailStubbed = [...pruned.tailStubbed, ...done.tailStubbed];
  const inSpan = new Set(span.spanSeqs);
  const note = notice(
    done.after,
    messageCount(start.ledger.filter((entry) => inSpan.has(entry.seq))),
    tailStubbed,
    () => shortfallReason(done.ledger, done.plan, compaction.fixedTokens, done.after),
  );
  host.set({
    ...withSummarizerUsage(host.get(), summarizeInput.model, result.usage, compaction.card),
    ledger: done.ledger,
  });
  setCompaction(
    host,
    {
      ...withUsage,
      plan: done.plan,
      autoCompact: recordCompactionSuccess(withUsage.autoCompact, stepNumber),
    },
    done.after,
  );
  await notify(
    host,
    result.extracted ? `${note} (summary extracted from the transcript: the summarizer failed)` : note,
    { beforeTokens: before, afterTokens: done.after, kind: compactionKind(request) },
  );
  return { stage: 'summarized', beforeTokens: before, afterTokens: done.after, note };
}

/** A summarizer failure: counted against the budget and noted; the pruning still applies. */
async function summarizerFailed(
  host: CompactionHost,
  pruned: PrunedCompaction,
  reason: string,
  before: number,
): Promise<CompactionResult> {
  const state = host.get();
  const compaction = compactionOf(state);
  const failed = recordSummarizerFailure(compaction.autoCompact, reason, state.goal.sessionId);
  // Pruning still helps while the summarizer is down; the next step tries again (spec S-BUDGET).
  setCompaction(host, { ...compaction, plan: pruned.plan, autoCompact: failed.state }, pruned.after);
  await notify(host, failed.note);
  return { stage: 'failed', beforeTokens: before, afterTokens: pruned.after, note: failed.note };
}
