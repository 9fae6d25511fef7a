/**
 * The verbatim tail: the latest tool exchanges, which both compaction stages leave exactly as they are.
 * An exchange is an assistant message with tool calls plus all their results, so a parallel batch is one
 * exchange and is never split.
 */
import type { LedgerEntry } from '../ledger';
import { TAIL_TOOL_EXCHANGES, TAIL_TOOL_EXCHANGES_FORCED } from './thresholds';

/** Whether an entry opens a tool exchange: an assistant message with at least one tool call. */
export function opensExchange(entry: LedgerEntry): boolean {
  return entry.role === 'assistant' && (entry.toolCallIds?.length ?? 0) > 0;
}

/** How many tool exchanges the verbatim tail keeps. */
export function tailExchanges(forced: boolean): number {
  return forced ? TAIL_TOOL_EXCHANGES_FORCED : TAIL_TOOL_EXCHANGES;
}

/**
 * Index in `entries` (in context order) where the verbatim tail starts: the assistant message of the
 * `exchanges`-th latest exchange, or of the oldest one when there are fewer; `entries.length` (an empty
 * tail) when there is none. Later plain messages belong to the tail too.
 */
export function verbatimTailStart(entries: LedgerEntry[], exchanges: number): number {
  let start = entries.length;
  let found = 0;
  for (let index = entries.length - 1; index >= 0 && found < exchanges; index--) {
    if (opensExchange(entries[index])) {
      start = index;
      found++;
    }
  }
  return widenForPairing(entries, start);
}

/**
 * Moves the tail start back until no result in the tail answers a call made before it. On a well-formed
 * history results follow their own call, so this changes nothing; it keeps a malformed one (a result
 * stored late) from producing an orphaned result when the span before the tail is dropped.
 */
function widenForPairing(entries: LedgerEntry[], start: number): number {
  const callIndex = new Map<string, number>();
  entries.forEach((entry, index) => {
    for (const id of entry.toolCallIds ?? []) if (!callIndex.has(id)) callIndex.set(id, index);
  });
  let widened = start;
  for (;;) {
    let earliest = widened;
    for (let index = widened; index < entries.length; index++) {
      const id = entries[index].toolCallId;
      const callAt = entries[index].role === 'tool' && id !== undefined ? callIndex.get(id) : undefined;
      if (callAt !== undefined && callAt < earliest) earliest = callAt;
    }
    if (earliest === widened) return widened;
    widened = earliest;
  }
}
