/**
 * Stage 2 of compaction (spec S-COMPACT): which messages the summarizer replaces, which stay verbatim,
 * and how the ledger and the plan look once the summary is stored. The summarizer itself is an activity;
 * this is the pure planning around it.
 */
import { type ContextPlan, contextEntries } from '../context-plan';
import { type LedgerEntry, lastSeqOf, lastSeqOfEntry } from '../ledger';
import { prunedContextTokens } from './prune';
import { tailExchanges, verbatimTailStart } from './tail';
import {
  KEPT_STEERING_MAX_SHARE,
  KEPT_USER_KINDS,
  KEPT_USER_MESSAGES,
  SUMMARY_TOKENS_ESTIMATE,
} from './thresholds';

/** The span a summary replaces. */
export interface SummarySpan {
  /** Messages to summarize, in context order, excluding the first message and the earlier summary. */
  spanSeqs: number[];
  /** The steering messages of the span, kept verbatim after the summary (see keptSteering). */
  keptSeqs: number[];
  /** The verbatim tail starts here: the first seq that stays in context after the summary. */
  tailFromSeq: number;
  /** The earlier summary, which the new one merges and replaces. */
  previousSummarySeq?: number;
}

/** Whether a message is a user request or steering message that compaction keeps verbatim. */
function isKeptKind(entry: LedgerEntry): boolean {
  return entry.role === 'user' && entry.kind !== undefined && KEPT_USER_KINDS.includes(entry.kind);
}

/** Which steering messages of the span a summary keeps verbatim. */
export interface SteeringRule {
  /**
   * Only the latest KEPT_USER_MESSAGES: the rule of executions started before every steering message
   * was kept, so that their histories replay with the decisions they made.
   */
  latestOnly?: boolean;
  /** Tokens all kept steering messages may take; the latest three are kept whatever it says. No cap when absent. */
  budgetTokens?: number;
}

/** The budget of kept steering messages for a model's usable input (KEPT_STEERING_MAX_SHARE of it). */
export function keptSteeringBudget(usableInputTokens: number): number {
  return Math.floor(usableInputTokens * KEPT_STEERING_MAX_SHARE);
}

/**
 * The steering messages of a span that stay verbatim: every one, newest first, while they fit the
 * budget; the latest three always (a flood of long messages is the only way past the budget).
 */
function keptSteering(span: LedgerEntry[], rule: SteeringRule): number[] {
  const steering = span.filter(isKeptKind);
  if (rule.latestOnly) return steering.slice(-KEPT_USER_MESSAGES).map((entry) => entry.seq);
  const budget = rule.budgetTokens ?? Number.POSITIVE_INFINITY;
  let tokens = 0;
  let from = steering.length;
  while (from > 0) {
    const next = steering[from - 1];
    const latest = steering.length - from < KEPT_USER_MESSAGES;
    if (!latest && tokens + next.tokens > budget) break;
    tokens += next.tokens;
    from -= 1;
  }
  return steering.slice(from).map((entry) => entry.seq);
}

/**
 * Plans a summary of everything between the first message and the verbatim tail (the last 3 tool
 * exchanges, 2 when forced, and any later plain messages). Null when nothing would be compacted: the
 * span is empty or holds only messages that would be kept verbatim again.
 */
export function planSummary(
  ledger: LedgerEntry[],
  plan: ContextPlan,
  options: { forced?: boolean; steering?: SteeringRule },
): SummarySpan | null {
  const previous = plan.summarySeq === undefined ? undefined : ledger.find((e) => e.seq === plan.summarySeq);
  const body = contextEntries(ledger, plan).filter(
    (entry) => entry.seq !== plan.firstSeq && entry.seq !== previous?.seq,
  );
  const start = verbatimTailStart(body, tailExchanges(options.forced ?? false));
  const span = body.slice(0, start);
  const keptSeqs = keptSteering(span, options.steering ?? {});
  if (span.length === keptSeqs.length) return null;
  return {
    spanSeqs: span.map((entry) => entry.seq),
    keptSeqs,
    // An empty tail starts after the last message: the stored summary and anything appended later.
    tailFromSeq: start < body.length ? body[start].seq : lastSeqOf(ledger) + 1,
    ...(previous ? { previousSummarySeq: previous.seq } : {}),
  };
}

/**
 * The ledger and plan once the summary is stored: the ledger keeps the first message, the new summary,
 * the kept messages and the tail; stubs and elisions before the tail are gone with their messages.
 */
export function applySummary(
  ledger: LedgerEntry[],
  plan: ContextPlan,
  summaryEntry: LedgerEntry,
  span: SummarySpan,
): { ledger: LedgerEntry[]; plan: ContextPlan } {
  const kept = new Set(span.keptSeqs);
  const summary: LedgerEntry = { ...summaryEntry, kind: 'summary' };
  const stays = (entry: LedgerEntry) =>
    entry.seq === plan.firstSeq ||
    kept.has(entry.seq) ||
    // Earlier summaries are merged into this one; the span itself is what the summary replaces.
    (entry.seq >= span.tailFromSeq && entry.kind !== 'summary');
  const next = [...ledger.filter((entry) => entry.seq !== summary.seq && stays(entry)), summary].sort(
    (a, b) => a.seq - b.seq,
  );
  const present = new Set(next.map((entry) => entry.seq));
  const inTail = (seq: number) => seq >= span.tailFromSeq && present.has(seq);
  return {
    ledger: next,
    plan: {
      firstSeq: plan.firstSeq,
      summarySeq: summary.seq,
      keptSeqs: span.keptSeqs.filter((seq) => present.has(seq)),
      fromSeq: span.tailFromSeq,
      stubSeqs: plan.stubSeqs.filter(inTail),
      elideArgsSeqs: plan.elideArgsSeqs.filter(inTail),
    },
  };
}

/**
 * Estimated request size after the fullest summary (fixed tokens, first message, kept messages, the
 * verbatim tail and a typical summary): if even this is over the threshold, summarizing cannot help.
 * The current estimate when there is nothing to summarize.
 */
export function summaryFloorTokens(
  ledger: LedgerEntry[],
  plan: ContextPlan,
  options: { fixedTokens: number; forced?: boolean; steering?: SteeringRule },
): number {
  const current = options.fixedTokens + prunedContextTokens(ledger, plan);
  const span = planSummary(ledger, plan, options);
  if (!span) return current;
  const kept = new Set(span.keptSeqs);
  const remaining = ledger.filter(
    (entry) => entry.seq === plan.firstSeq || kept.has(entry.seq) || entry.seq >= span.tailFromSeq,
  );
  const floorPlan: ContextPlan = {
    ...plan,
    summarySeq: undefined,
    keptSeqs: span.keptSeqs,
    fromSeq: span.tailFromSeq,
  };
  const floor = options.fixedTokens + prunedContextTokens(remaining, floorPlan) + SUMMARY_TOKENS_ESTIMATE;
  return Math.min(current, floor);
}

/**
 * Estimated tokens the summary takes out of the context: the span as the plan shows it, without the
 * messages kept verbatim, plus the earlier summary it replaces.
 */
export function spanShownTokens(ledger: LedgerEntry[], plan: ContextPlan, span: SummarySpan): number {
  const inSpan = new Set(span.spanSeqs);
  const kept = new Set(span.keptSeqs);
  const stays = (entry: LedgerEntry) => !inSpan.has(entry.seq) || kept.has(entry.seq);
  const without = contextEntries(ledger, plan).filter(
    (entry) => stays(entry) && entry.seq !== span.previousSummarySeq,
  );
  return prunedContextTokens(ledger, plan) - prunedContextTokens(without, plan);
}

/** Tokens of the earlier summary in the plan, 0 when there is none. */
export function previousSummaryTokens(ledger: LedgerEntry[], plan: ContextPlan): number {
  if (plan.summarySeq === undefined) return 0;
  return ledger.find((entry) => entry.seq === plan.summarySeq)?.tokens ?? 0;
}

/**
 * The span as runs of sequence numbers `[from, to]`, ascending, for the summarize activity: a span of
 * folded ranges stays a few numbers however many messages it holds. Summaries stored inside a run are
 * not part of it; the activity leaves them out by their key.
 */
export function spanRanges(ledger: LedgerEntry[], span: SummarySpan): Array<[number, number]> {
  const bySeq = new Map(ledger.map((entry) => [entry.seq, entry]));
  const runs: Array<[number, number]> = [];
  for (const seq of [...span.spanSeqs].sort((a, b) => a - b)) {
    const entry = bySeq.get(seq);
    const to = entry ? lastSeqOfEntry(entry) : seq;
    const last = runs[runs.length - 1];
    if (last && last[1] + 1 >= seq) last[1] = Math.max(last[1], to);
    else runs.push([seq, to]);
  }
  return runs;
}
