/**
 * The context plan: which stored messages the model sees, and how. The transcript is append-only, so
 * compaction never edits a message; it changes this plan (spec S-COMPACT). Pure and deterministic:
 * the workflow keeps the plan in its state and the model-step activity renders the prompt from it.
 */
import type { LedgerEntry } from './ledger';

/** What the model sees, as references into the transcript. */
export interface ContextPlan {
  /** The first message (objective + environment snapshot), always verbatim. */
  firstSeq: number;
  /** The stored summary message replacing the compacted span, if any (its ledger entry has kind 'summary'). */
  summarySeq?: number;
  /** The steering messages of the compacted span, kept verbatim after the summary (summary-span.ts). */
  keptSeqs: number[];
  /** Messages with seq >= fromSeq are in context (the verbatim tail). 0 before any summary. */
  fromSeq: number;
  /** Tool results in the tail shown as stubs (pruned). */
  stubSeqs: number[];
  /** Assistant messages in the tail whose very large string arguments are elided. */
  elideArgsSeqs: number[];
}

/** The plan of a conversation that has never been compacted: everything is in context. */
export function initialContextPlan(firstSeq: number): ContextPlan {
  return { firstSeq, keptSeqs: [], fromSeq: 0, stubSeqs: [], elideArgsSeqs: [] };
}

/** Whether an entry belongs to the verbatim tail of the plan (first, summary and kept have their own slots). */
function inTail(entry: LedgerEntry, plan: ContextPlan, kept: Set<number>): boolean {
  if (entry.seq < plan.fromSeq || entry.seq === plan.firstSeq || kept.has(entry.seq)) return false;
  // The summary is appended after the span it replaces, so its seq falls inside the tail's range; it is
  // shown in its own slot instead. Any older summary still in the ledger was superseded and is not shown.
  return entry.kind !== 'summary';
}

/** The ledger entries in context, in the order the model sees them: first, summary, kept, then the tail. */
export function contextEntries(ledger: LedgerEntry[], plan: ContextPlan): LedgerEntry[] {
  const bySeq = new Map(ledger.map((entry) => [entry.seq, entry]));
  const head: LedgerEntry[] = [];
  const first = bySeq.get(plan.firstSeq);
  if (first) head.push(first);
  const summary = plan.summarySeq === undefined ? undefined : bySeq.get(plan.summarySeq);
  if (summary) head.push(summary);
  for (const seq of plan.keptSeqs) {
    const kept = bySeq.get(seq);
    if (kept && seq !== plan.firstSeq) head.push(kept);
  }
  const keptSet = new Set(plan.keptSeqs);
  const tail = ledger.filter((entry) => inTail(entry, plan, keptSet)).sort((a, b) => a.seq - b.seq);
  return [...head, ...tail];
}

/** Estimated tokens of one entry as the plan shows it. */
export function shownTokens(
  entry: LedgerEntry,
  stubbed: ReadonlySet<number>,
  elided: ReadonlySet<number>,
  stubTokens: number,
  excerptTokens = 0,
): number {
  // A range holds only messages pruning never shrinks; its seq may equal a stubbed one's, so test it first.
  if (entry.role === 'range') return entry.tokens;
  // Without a spool copy the stub carries a head/tail excerpt, since the model cannot re-read the output.
  if (stubbed.has(entry.seq)) return stubTokens + (entry.spoolId === undefined ? excerptTokens : 0);
  // The elision marker is a few tokens; it is within the error of the estimate itself.
  if (elided.has(entry.seq)) return Math.max(0, entry.tokens - (entry.largeArgsTokens ?? 0));
  return entry.tokens;
}

/**
 * Estimated tokens of the context: stubs count as `stubTokens` (plus `excerptTokens` for outputs without
 * a spool copy), elided arguments are subtracted.
 */
export function contextTokens(
  ledger: LedgerEntry[],
  plan: ContextPlan,
  stubTokens: number,
  excerptTokens = 0,
): number {
  const stubbed = new Set(plan.stubSeqs);
  const elided = new Set(plan.elideArgsSeqs);
  return contextEntries(ledger, plan).reduce(
    (sum, entry) => sum + shownTokens(entry, stubbed, elided, stubTokens, excerptTokens),
    0,
  );
}

/**
 * Problems with tool-call pairing in a message sequence, empty when providers will accept it: every
 * result answers a call made earlier and still open (no later assistant message in between), and every
 * call has exactly one result.
 */
export function checkToolPairing(entries: LedgerEntry[]): string[] {
  const problems: string[] = [];
  /** Call id → seq of the assistant message that made it. */
  const calls = new Map<string, number>();
  const answered = new Set<string>();
  let lastAssistantSeq: number | null = null;
  for (const entry of entries) {
    if (entry.role === 'assistant') {
      lastAssistantSeq = entry.seq;
      for (const id of entry.toolCallIds ?? []) {
        if (calls.has(id))
          problems.push(`seq ${entry.seq}: tool call ${id} was already made at seq ${calls.get(id)}`);
        else calls.set(id, entry.seq);
      }
    } else if (entry.role === 'tool') {
      const id = entry.toolCallId;
      if (id === undefined) {
        problems.push(`seq ${entry.seq}: tool result without a call id`);
      } else if (!calls.has(id)) {
        problems.push(`seq ${entry.seq}: tool result for ${id} without its call before it`);
      } else if (answered.has(id)) {
        problems.push(`seq ${entry.seq}: second result for tool call ${id}`);
      } else {
        answered.add(id);
        if (calls.get(id) !== lastAssistantSeq) {
          problems.push(`seq ${entry.seq}: result for ${id} comes after a later assistant message`);
        }
      }
    }
  }
  for (const [id, seq] of calls) {
    if (!answered.has(id)) problems.push(`seq ${seq}: tool call ${id} has no result`);
  }
  return problems;
}
