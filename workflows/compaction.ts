/**
 * Compaction inside the goal workflow: the auto-compact check before each model step, manual
 * `compact`, and forced compaction on a provider context overflow. The decisions are pure
 * functions in core/compaction; this module runs them and the summarize activity.
 */
import { isCancellation, log } from '@temporalio/workflow';
import type { SummarizeResult } from '../activities/compaction-activities';
import { decideAutoCompact } from '../core/compaction/decide';
import { estimatePressure, tokensAppendedSince } from '../core/compaction/estimate';
import {
  recordCompactionSuccess,
  recordPruneOnly,
  recordSummarizerFailure,
} from '../core/compaction/failure-budget';
import { compactionNotice } from '../core/compaction/notice';
import { planPrune, prunedContextTokens } from '../core/compaction/prune';
import { type CompactionState, initialCompactionState } from '../core/compaction/state';
import { applySummary, planSummary, summaryFloorTokens } from '../core/compaction/summary-span';
import { addToBreakdown } from '../core/cost';
import { type GoalState, noteAction } from '../core/goal';
import { lastSeqOf } from '../core/ledger';
import { type StoredMessage, userText } from '../core/messages';
import { storeActivities, summarizerActivities } from './activities-proxy';
import { innermostMessage } from './failures';

/** The summarizer's request gets at most this share of the usable input budget. */
const SUMMARIZER_INPUT_SHARE = 0.6;

/** How a compaction ended. */
export type CompactionStage = 'none' | 'pruned' | 'summarized' | 'discarded' | 'failed' | 'wait';

/** What a compaction did, as the `compact` update returns it. */
export interface CompactionResult {
  stage: CompactionStage;
  beforeTokens: number;
  afterTokens: number;
  note: string | null;
}

/** Why a compaction runs. */
export interface CompactionRequest {
  /** A user's `goalrun compact`: always summarizes (stage 2) when there is a span. */
  manual?: boolean;
  /** A last resort (over the hard limit, or a provider overflow): keeps two exchanges, not three. */
  forced?: boolean;
  /** Recovering from a provider overflow: a failed summarizer falls back to an extracted summary. */
  recovery?: boolean;
  topic?: string;
}

/** The workflow state the compaction works on, and how it writes to the transcript. */
export interface CompactionHost {
  get(): GoalState;
  set(state: GoalState): void;
  appendMessage(key: string, message: StoredMessage): Promise<void>;
}

/** The compaction state of a goal, created on first use (older histories have none). */
export function compactionOf(state: GoalState): CompactionState {
  if (state.compaction) return state.compaction;
  const firstSeq = state.ledger[0]?.seq ?? 0;
  return initialCompactionState(firstSeq, state.goal.autoCompact);
}

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

/** Context pressure of the coming request: the last reported input plus what was appended since. */
export function currentPressure(state: GoalState): number {
  const compaction = compactionOf(state);
  if (compaction.lastInputTokens === 0) {
    return compaction.fixedTokens + prunedContextTokens(state.ledger, compaction.plan);
  }
  return estimatePressure({
    lastReportedInputTokens: compaction.lastInputTokens,
    tokensAppendedSince: tokensAppendedSince(state.ledger, compaction.lastCoveredSeq),
  });
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
  const decision = decideAutoCompact({
    budgetState: compaction.autoCompact,
    estimateTokens: estimate,
    fixedTokens: compaction.fixedTokens,
    thresholdTokens: budget.compactAtTokens,
    hardLimitTokens: budget.stopAtTokens,
    stepNumber,
    floorTokens: summaryFloorTokens(state.ledger, compaction.plan, { fixedTokens: compaction.fixedTokens }),
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

/** Runs a compaction: prune first, then summarize unless pruning was enough (spec S-COMPACT). */
export async function compact(
  host: CompactionHost,
  stepNumber: number,
  request: CompactionRequest & { pruneOnly?: boolean },
): Promise<CompactionResult> {
  const start = host.get();
  const compaction = compactionOf(start);
  const budget = compaction.budget;
  const beforeTokens = currentPressure(start);
  if (!budget) return { stage: 'none', beforeTokens, afterTokens: beforeTokens, note: null };

  const pruned = planPrune(start.ledger, compaction.plan, {
    windowTokens: budget.windowTokens,
    thresholdTokens: budget.compactAtTokens,
    fixedTokens: compaction.fixedTokens,
    forced: request.forced,
    estimateTokens: beforeTokens,
  });
  const prunedAny = pruned.stubbed.length > 0 || pruned.elided.length > 0;
  const afterPrune = compaction.fixedTokens + prunedContextTokens(start.ledger, pruned.plan);
  if (request.pruneOnly || (pruned.enough && !request.manual && !request.forced)) {
    if (!prunedAny) return { stage: 'none', beforeTokens, afterTokens: beforeTokens, note: null };
    const note = compactionNotice({
      before: beforeTokens,
      after: afterPrune,
      stubbed: pruned.stubbed.length,
      elided: pruned.elided.length,
      summarized: 0,
    });
    setCompaction(
      host,
      { ...compaction, plan: pruned.plan, autoCompact: recordPruneOnly(compaction.autoCompact, stepNumber) },
      afterPrune,
    );
    await notify(host, note);
    return { stage: 'pruned', beforeTokens, afterTokens: afterPrune, note };
  }

  const span = planSummary(start.ledger, pruned.plan, { forced: request.forced });
  if (!span) {
    setCompaction(host, { ...compaction, plan: pruned.plan }, afterPrune);
    const note = prunedAny
      ? compactionNotice({
          before: beforeTokens,
          after: afterPrune,
          stubbed: pruned.stubbed.length,
          elided: pruned.elided.length,
          summarized: 0,
        })
      : null;
    if (note) await notify(host, note);
    return { stage: prunedAny ? 'pruned' : 'none', beforeTokens, afterTokens: afterPrune, note };
  }

  const summarizeInput = {
    sessionId: start.goal.sessionId,
    compaction: compaction.compactions + 1,
    spanSeqs: span.spanSeqs,
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
    const reason = innermostMessage(err);
    if (request.recovery) {
      // Recovering from an overflow: a summary extracted from the transcript beats a failed run.
      result = await storeActivities.summarize({ ...summarizeInput, extracted: true });
    } else {
      const failed = recordSummarizerFailure(
        compactionOf(host.get()).autoCompact,
        reason,
        start.goal.sessionId,
      );
      // Pruning still helps while the summarizer is down.
      setCompaction(host, { ...compaction, plan: pruned.plan, autoCompact: failed.state }, afterPrune);
      await notify(host, failed.note);
      return { stage: 'failed', beforeTokens, afterTokens: afterPrune, note: failed.note };
    }
  }

  const applied = applySummary(start.ledger, pruned.plan, result.entry, span);
  const afterTokens = compaction.fixedTokens + prunedContextTokens(applied.ledger, applied.plan);
  const withUsage = {
    ...compaction,
    compactions: compaction.compactions + 1,
    summarizerRequests: compaction.summarizerRequests + (result.usage ? 1 : 0),
    summarizerTokens:
      compaction.summarizerTokens + (result.usage ? result.usage.inputTokens + result.usage.outputTokens : 0),
  };
  if (afterTokens >= beforeTokens && !request.forced) {
    const note = `compaction discarded: it would not shrink the context (${beforeTokens} → ${afterTokens} tokens)`;
    setCompaction(host, { ...withUsage, plan: pruned.plan }, afterPrune);
    await notify(host, note);
    return { stage: 'discarded', beforeTokens, afterTokens: afterPrune, note };
  }
  const note = compactionNotice({
    before: beforeTokens,
    after: afterTokens,
    stubbed: pruned.stubbed.length,
    elided: pruned.elided.length,
    summarized: span.spanSeqs.length,
    forced: request.forced,
  });
  const state = host.get();
  host.set({
    ...state,
    ledger: applied.ledger,
    // Summarizer usage counts in the cost of the goal that triggered it, and is marked as such.
    breakdown:
      result.usage && compaction.card
        ? addToBreakdown(state.breakdown ?? {}, summarizeInput.model, result.usage, {
            summarizer: true,
            card: compaction.card,
          })
        : state.breakdown,
    usage: result.usage
      ? {
          ...state.usage,
          totalTokens: state.usage.totalTokens + result.usage.inputTokens + result.usage.outputTokens,
          inputTokens: state.usage.inputTokens + result.usage.inputTokens,
          outputTokens: state.usage.outputTokens + result.usage.outputTokens,
          requests: state.usage.requests + 1,
        }
      : state.usage,
  });
  setCompaction(
    host,
    {
      ...withUsage,
      plan: applied.plan,
      autoCompact: recordCompactionSuccess(withUsage.autoCompact, stepNumber),
    },
    afterTokens,
  );
  await notify(
    host,
    result.extracted ? `${note} (summary extracted from the transcript: the summarizer failed)` : note,
  );
  return { stage: 'summarized', beforeTokens, afterTokens, note };
}

/**
 * Stores new compaction state. The pressure restarts from the compacted estimate and context
 * occupancy drops with it (spec: after compaction the gauge is reset).
 */
function setCompaction(host: CompactionHost, compaction: CompactionState, pressure: number): void {
  const state = host.get();
  host.set({
    ...state,
    usage: { ...state.usage, contextTokens: pressure },
    compaction: { ...compaction, lastInputTokens: pressure, lastCoveredSeq: lastSeqOf(state.ledger) },
  });
}

/** Writes a one-line notice to the transcript and the recent-actions log. */
async function notify(host: CompactionHost, note: string): Promise<void> {
  const state = host.get();
  const compaction = compactionOf(state);
  host.set(noteAction({ ...state, compaction: { ...compaction, notices: compaction.notices + 1 } }, note));
  await host.appendMessage(`notice:${compaction.notices + 1}`, userText(`[goalrun] ${note}`));
  // The notice itself is part of the next request; it must not look like unreported pressure.
  const after = host.get();
  const current = compactionOf(after);
  host.set({ ...after, compaction: { ...current, lastCoveredSeq: lastSeqOf(after.ledger) } });
}
