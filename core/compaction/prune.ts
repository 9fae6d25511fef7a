/**
 * Stage 1 of compaction (spec S-COMPACT): replace old tool outputs with stubs, no model call. Spooled
 * outputs go first and the newest part of the conversation is protected; if that is not enough, every
 * large output before the verbatim tail is stubbed and very large arguments of old tool calls are elided.
 * Only the plan changes: the stored messages stay as they are.
 */
import { type ContextPlan, contextEntries, contextTokens, shownTokens } from '../context-plan';
import type { LedgerEntry } from '../ledger';
import { scaledEstimate } from './estimate';
import { hasLargeArgs, isLargeOutput } from './prunable';
import { tailExchanges, verbatimTailStart } from './tail';
import {
  PROTECTED_WINDOW_FRACTION,
  PROTECTED_WINDOW_MAX_TOKENS,
  STUB_EXCERPT_TOKENS,
  STUB_TOKENS,
} from './thresholds';

/** What pruning needs to know about the model and the request. */
export interface PruneOptions {
  /** The model's effective context window. */
  windowTokens: number;
  /** The auto-compact threshold. */
  thresholdTokens: number;
  /** Pruning is enough once the estimate is below this (the low-water mark); the threshold when absent. */
  targetTokens?: number;
  /** System prompt and tool schemas, which every request carries. */
  fixedTokens: number;
  /** A forced (last-resort) compaction keeps fewer exchanges verbatim. */
  forced?: boolean;
  /** Measured pressure (provider usage plus appended messages); defaults to fixedTokens plus the ledger estimate. */
  estimateTokens?: number;
  /**
   * How the estimate after pruning is derived from the measured one: `scaled` by the ratio of the ledger
   * estimates (scaledEstimate); `delta`, the measured one less the estimated tokens taken out, is how
   * goals started before the low-water mark judged it, and their histories replay only that way.
   */
  afterEstimate?: 'scaled' | 'delta';
}

/** How far pruning went: nothing (already under the threshold), spooled outputs only, or everything allowed. */
export type PruneStage = 'none' | 'spooled' | 'all';

/** The outcome of pruning: the new plan, what it newly stubbed and elided, and the estimates around it. */
export interface PruneResult {
  plan: ContextPlan;
  /** Tool results newly shown as stubs, ascending. */
  stubbed: number[];
  /** Assistant messages whose large arguments are newly elided, ascending. */
  elided: number[];
  before: number;
  after: number;
  /** The estimate after pruning is under the target: no summarizer call is needed. */
  enough: boolean;
  stage: PruneStage;
}

/** Tokens of the newest part of the conversation that the first stage leaves alone: min(window/5, 40k). */
export function protectedWindowTokens(windowTokens: number): number {
  return Math.min(Math.floor(windowTokens * PROTECTED_WINDOW_FRACTION), PROTECTED_WINDOW_MAX_TOKENS);
}

/** Estimated tokens of the context as pruning sees it: stubs at their estimated size. */
export function prunedContextTokens(ledger: LedgerEntry[], plan: ContextPlan): number {
  return contextTokens(ledger, plan, STUB_TOKENS, STUB_EXCERPT_TOKENS);
}

/** The tail entries of the context (after first, summary and kept messages), in seq order. */
export function tailRegion(ledger: LedgerEntry[], plan: ContextPlan): LedgerEntry[] {
  const kept = new Set(plan.keptSeqs);
  return contextEntries(ledger, plan).filter(
    (entry) => entry.seq !== plan.firstSeq && entry.seq !== plan.summarySeq && !kept.has(entry.seq),
  );
}

/**
 * Seqs of the entries that start within the newest `windowTokens` tokens, as the plan shows them. An entry
 * straddling the boundary is protected: it is partly recent.
 */
export function protectedSeqs(tail: LedgerEntry[], plan: ContextPlan, windowTokens: number): Set<number> {
  const stubbed = new Set(plan.stubSeqs);
  const elided = new Set(plan.elideArgsSeqs);
  const seqs = new Set<number>();
  let newer = 0;
  for (let index = tail.length - 1; index >= 0 && newer < windowTokens; index--) {
    seqs.add(tail[index].seq);
    newer += shownTokens(tail[index], stubbed, elided, STUB_TOKENS, STUB_EXCERPT_TOKENS);
  }
  return seqs;
}

/** The plan with more stubs and elisions, kept sorted so equal decisions give equal plans. */
export function withPruned(plan: ContextPlan, stubs: LedgerEntry[], elisions: LedgerEntry[]): ContextPlan {
  const ascending = (a: number, b: number) => a - b;
  return {
    ...plan,
    stubSeqs: [...new Set([...plan.stubSeqs, ...stubs.map((entry) => entry.seq)])].sort(ascending),
    elideArgsSeqs: [...new Set([...plan.elideArgsSeqs, ...elisions.map((entry) => entry.seq)])].sort(
      ascending,
    ),
  };
}

/** Prunes old tool outputs until the estimate is under the target, or as far as the rules allow. */
export function planPrune(ledger: LedgerEntry[], plan: ContextPlan, options: PruneOptions): PruneResult {
  const shownBefore = prunedContextTokens(ledger, plan);
  const before = options.estimateTokens ?? options.fixedTokens + shownBefore;
  const target = options.targetTokens ?? options.thresholdTokens;
  const outcome = (next: ContextPlan, stubs: LedgerEntry[], elisions: LedgerEntry[], stage: PruneStage) => {
    const shownAfter = prunedContextTokens(ledger, next);
    const after =
      options.afterEstimate === 'scaled'
        ? scaledEstimate(before, options.fixedTokens + shownBefore, options.fixedTokens + shownAfter)
        : Math.max(0, before - (shownBefore - shownAfter));
    const seqs = (entries: LedgerEntry[]) => entries.map((entry) => entry.seq).sort((a, b) => a - b);
    return {
      plan: next,
      stubbed: seqs(stubs),
      elided: seqs(elisions),
      before,
      after,
      enough: after < target,
      stage,
    };
  };
  if (before < target) return outcome(plan, [], [], 'none');

  const tail = tailRegion(ledger, plan);
  // Only what lies before the verbatim tail is ever pruned: the latest exchanges stay exact.
  const old = tail.slice(0, verbatimTailStart(tail, tailExchanges(options.forced ?? false)));
  const stubbed = new Set(plan.stubSeqs);
  const elided = new Set(plan.elideArgsSeqs);
  const large = old.filter((entry) => isLargeOutput(entry) && !stubbed.has(entry.seq));

  // First stage: spooled outputs (re-readable with tool-output), outside the protected recent window.
  const recent = protectedSeqs(tail, plan, protectedWindowTokens(options.windowTokens));
  const spooled = large.filter((entry) => entry.spoolId !== undefined && !recent.has(entry.seq));
  const first = outcome(withPruned(plan, spooled, []), spooled, [], 'spooled');
  if (first.enough) return first;

  // Not enough: every large output before the verbatim tail (those without a spool copy are rendered
  // with a head/tail excerpt), and very large arguments of old tool calls. The recent window is not
  // protected any more: the alternative is summarizing those turns away altogether.
  const bigArgs = old.filter((entry) => hasLargeArgs(entry) && !elided.has(entry.seq));
  return outcome(withPruned(plan, large, bigArgs), large, bigArgs, 'all');
}
