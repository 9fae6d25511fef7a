/**
 * Keeps the ledger small (spec: control state in Temporal stays small): old runs of small messages are
 * folded into one range entry, and settled entries that stay lose the fields no decision reads. Folding
 * changes no compaction decision: only messages pruning can never shrink are folded, never a result
 * apart from its call, and only before the verbatim tail, which never moves back; token sums stay exact.
 */
import type { LedgerEntry } from '../ledger';
import { hasLargeArgs, isLargeOutput } from './prunable';
import { verbatimTailStart } from './tail';
import { KEPT_USER_KINDS, LEDGER_FOLD_MIN_ENTRIES, TAIL_TOOL_EXCHANGES } from './thresholds';

/** Whether an entry must stay an entry of its own: it is shown in its own slot, kept, or prunable. */
function standsAlone(entry: LedgerEntry): boolean {
  if (entry.role === 'range') return false;
  if (entry.role === 'user') {
    return entry.kind === 'first' || entry.kind === 'summary' || KEPT_USER_KINDS.includes(entry.kind!);
  }
  return isLargeOutput(entry) || hasLargeArgs(entry);
}

/**
 * An old entry without the fields no decision reads once it is settled: call ids (only the verbatim
 * tail's pairing reads them, and a settled entry is never in it again), tool name, size and status
 * (stub facts live in the stored message's meta, where the context builder reads them).
 */
function settled(entry: LedgerEntry): LedgerEntry {
  if (entry.role === 'assistant' && entry.toolCallIds) {
    const { toolCallIds: _ids, ...rest } = entry;
    return rest;
  }
  if (entry.role === 'tool') {
    const { toolCallId: _id, toolName: _name, bytes: _bytes, ok: _ok, ...rest } = entry;
    return rest;
  }
  return entry;
}

/** One range entry for a run of foldable entries. */
function rangeOf(run: LedgerEntry[]): LedgerEntry {
  const last = run[run.length - 1];
  return {
    seq: run[0].seq,
    role: 'range',
    tokens: run.reduce((sum, entry) => sum + entry.tokens, 0),
    to: last.to ?? last.seq,
    count: run.reduce((sum, entry) => sum + (entry.role === 'range' ? (entry.count ?? 1) : 1), 0),
  };
}

/**
 * The sequence number before which entries are settled: the start of the verbatim tail (the latest
 * three exchanges). Everything before it was in an earlier request, since an assistant message follows
 * it, and is before every future verbatim tail. Null when there is no exchange yet.
 */
function settledBefore(sorted: LedgerEntry[]): number | null {
  const start = verbatimTailStart(sorted, TAIL_TOOL_EXCHANGES);
  return start < sorted.length ? sorted[start].seq : null;
}

/** The ledger with old runs of small messages folded into ranges; unchanged while it is short. */
export function foldLedger(ledger: LedgerEntry[]): LedgerEntry[] {
  if (ledger.length < LEDGER_FOLD_MIN_ENTRIES) return ledger;
  const sorted = [...ledger].sort((a, b) => a.seq - b.seq);
  const boundary = settledBefore(sorted);
  if (boundary === null) return ledger;

  const out: LedgerEntry[] = [];
  let run: LedgerEntry[] = [];
  /** Calls made in the run and not answered yet: a range may only end where there are none. */
  let open = new Set<string>();
  /** Length of the run at its last point with no open call. */
  let whole = 0;
  const flush = () => {
    const folded = run.slice(0, whole);
    if (folded.length >= 2 || folded[0]?.role === 'range') out.push(rangeOf(folded));
    else out.push(...folded.map(settled));
    out.push(...run.slice(whole).map(settled));
    run = [];
    open = new Set();
    whole = 0;
  };
  let index = 0;
  for (; index < sorted.length && (sorted[index].to ?? sorted[index].seq) < boundary; index++) {
    const entry = sorted[index];
    // A result whose call is not in the run (or whose call id was dropped as settled) stays on its own.
    const foldable =
      !standsAlone(entry) &&
      (entry.role !== 'tool' || (entry.toolCallId !== undefined && open.has(entry.toolCallId)));
    if (!foldable) {
      flush();
      out.push(settled(entry));
      continue;
    }
    run.push(entry);
    for (const id of entry.toolCallIds ?? []) open.add(id);
    if (entry.role === 'tool') open.delete(entry.toolCallId!);
    if (open.size === 0) whole = run.length;
  }
  flush();
  out.push(...sorted.slice(index));
  return out;
}
