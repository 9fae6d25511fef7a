/**
 * The compaction rules of goals whose history predates the low-water mark (no `compaction-low-water`
 * marker). Their histories replay only if every decision is made as it was then: compact to just under
 * the threshold, judge the floor with a full-size summary, and always summarize a forced compaction.
 * Only what carries no decision changed: the summarize input names its span by runs, and the activity
 * now merges the earlier summary, which it could miss before.
 */
import { isCancellation } from '@temporalio/workflow';
import type { SummarizeResult } from '../activities/compaction-activities';
import {
  recordCompactionSuccess,
  recordPruneOnly,
  recordSummarizerFailure,
} from '../core/compaction/failure-budget';
import { compactionNotice } from '../core/compaction/notice';
import { planPrune, prunedContextTokens } from '../core/compaction/prune';
import { applySummary, planSummary, spanRanges } from '../core/compaction/summary-span';
import { messageCount } from '../core/ledger';
import { storeActivities, summarizerActivities } from './activities-proxy';
import {
  type CompactionHost,
  type CompactionRequest,
  type CompactionResult,
  compactionOf,
  countSummary,
  currentPressure,
  notify,
  SUMMARIZER_INPUT_SHARE,
  setCompaction,
  withSummarizerUsage,
} from './compaction-host';
import { innermostMessage } from './failures';

/** Runs a compaction under the legacy rules: prune first, then summarize unless pruning was enough. */
export async function compactLegacy(
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
  const prunedNotice = () =>
    compactionNotice({
      before: beforeTokens,
      after: afterPrune,
      stubbed: pruned.stubbed.length,
      elided: pruned.elided.length,
      summarized: 0,
    });
  if (request.pruneOnly || (pruned.enough && !request.manual && !request.forced)) {
    if (!prunedAny) return { stage: 'none', beforeTokens, afterTokens: beforeTokens, note: null };
    const note = prunedNotice();
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
    const note = prunedAny ? prunedNotice() : null;
    if (note) await notify(host, note);
    return { stage: prunedAny ? 'pruned' : 'none', beforeTokens, afterTokens: afterPrune, note };
  }

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
  const withUsage = countSummary(compaction, result.usage);
  if (afterTokens >= beforeTokens && !request.forced) {
    const note = `compaction discarded: it would not shrink the context (${beforeTokens} → ${afterTokens} tokens)`;
    setCompaction(host, { ...withUsage, plan: pruned.plan }, afterPrune);
    await notify(host, note);
    return { stage: 'discarded', beforeTokens, afterTokens: afterPrune, note };
  }
  const inSpan = new Set(span.spanSeqs);
  const note = compactionNotice({
    before: beforeTokens,
    after: afterTokens,
    stubbed: pruned.stubbed.length,
    elided: pruned.elided.length,
    summarized: messageCount(start.ledger.filter((entry) => inSpan.has(entry.seq))),
    forced: request.forced,
  });
  const state = host.get();
  host.set({
    ...withSummarizerUsage(state, summarizeInput.model, result.usage, compaction.card),
    ledger: applied.ledger,
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
