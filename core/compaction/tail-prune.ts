/**
 * Pruning inside the verbatim tail (issue 9.3). In a small window the last tool exchanges, which both
 * stages normally keep exact, can alone hold more than the low-water mark; summarizing again then frees
 * almost nothing and just costs a summarizer call. Instead their large outputs become stubs too, oldest
 * first. The newest exchange, whose results the model has not seen yet, is stubbed only when the request
 * would otherwise not fit at all. Stubs keep pairing: the result message stays, shown as its stub.
 */
import type { ContextPlan } from '../context-plan';
import type { LedgerEntry } from '../ledger';
import { scaledEstimate } from './estimate';
import { isLargeOutput } from './prunable';
import { prunedContextTokens, tailRegion, withPruned } from './prune';
import { opensExchange, tailExchanges, verbatimTailStart } from './tail';

/** What tail pruning aims for. */
export interface TailPruneOptions {
  /** A forced compaction keeps two exchanges verbatim instead of three. */
  forced?: boolean;
  /** The estimate of the request as the plan stands. */
  estimateTokens: number;
  /** System prompt and tool schemas, part of every request: the base the estimate is scaled on. */
  fixedTokens: number;
  /** Stub outputs until the estimate is below this (the low-water mark). */
  targetTokens: number;
  /** The newest exchange is stubbed only while the estimate is over this (the request would not fit). */
  hardLimitTokens: number;
  /** What a summary made next will take out: both levels are judged as after it. */
  laterSavingTokens?: number;
}

/** The plan with tail outputs stubbed, which ones (ascending), and the estimate after. */
export interface TailPruneResult {
  plan: ContextPlan;
  stubbed: number[];
  after: number;
  /** The estimate is below the target. */
  enough: boolean;
}

/** Large, not yet stubbed outputs of the verbatim tail: older exchanges first, then the newest exchange's. */
export function tailPruneCandidates(
  ledger: LedgerEntry[],
  plan: ContextPlan,
  forced: boolean,
): { older: LedgerEntry[]; newest: LedgerEntry[] } {
  const tail = tailRegion(ledger, plan);
  const verbatim = tail.slice(verbatimTailStart(tail, tailExchanges(forced)));
  const newestCall = [...verbatim].reverse().find(opensExchange);
  const newestIds = new Set(newestCall?.toolCallIds ?? []);
  const stubbed = new Set(plan.stubSeqs);
  const large = verbatim.filter((entry) => isLargeOutput(entry) && !stubbed.has(entry.seq));
  const isNewest = (entry: LedgerEntry) =>
    newestCall !== undefined && entry.seq > newestCall.seq && newestIds.has(entry.toolCallId ?? '');
  return { older: large.filter((entry) => !isNewest(entry)), newest: large.filter(isNewest) };
}

/** Stubs outputs of the verbatim tail, oldest first, until the estimate is below the target. */
export function planTailPrune(
  ledger: LedgerEntry[],
  plan: ContextPlan,
  options: TailPruneOptions,
): TailPruneResult {
  const shownBefore = prunedContextTokens(ledger, plan);
  const estimateOf = (next: ContextPlan) =>
    scaledEstimate(
      options.estimateTokens,
      options.fixedTokens + shownBefore,
      options.fixedTokens + prunedContextTokens(ledger, next),
    );
  const { older, newest } = tailPruneCandidates(ledger, plan, options.forced ?? false);
  let current = plan;
  let after = options.estimateTokens;
  const stubbed: LedgerEntry[] = [];
  const stubUntil = (candidates: LedgerEntry[], level: number) => {
    for (const entry of candidates) {
      if (after < level) return;
      current = withPruned(current, [entry], []);
      stubbed.push(entry);
      after = estimateOf(current);
    }
  };
  const later = Math.max(0, options.laterSavingTokens ?? 0);
  stubUntil(older, options.targetTokens + later);
  // Newest last: the model has not read these results yet, so only a request that cannot fit loses them.
  stubUntil(newest, options.hardLimitTokens + 1 + later);
  return {
    plan: current,
    stubbed: stubbed.map((entry) => entry.seq).sort((a, b) => a - b),
    after,
    enough: after < options.targetTokens,
  };
}
