/**
 * The workflow's view of the conversation: one small entry per stored message. The bodies live in
 * the session store; activities receive sequence numbers, never the transcript. Old runs of small
 * messages are folded into range entries (compaction/ledger-fold.ts), so the ledger carried in
 * workflow state stays within a size budget however long the conversation grows.
 */
import { foldLedger } from './compaction/ledger-fold';

/** Where a user-role message came from; compaction keeps the latest real user and steering ones. */
export type UserMessageKind = 'first' | 'continuation' | 'resume' | 'steering' | 'summary';

/** One message of the transcript, as the workflow knows it, or a folded run of old small messages. */
export interface LedgerEntry {
  /** The message's sequence number; for a range, its first message. */
  seq: number;
  /**
   * `range`: messages `seq`..`to` of the transcript (summaries stored in between excepted), all old,
   * small and settled, so that no compaction decision looks at them one by one.
   */
  role: 'user' | 'assistant' | 'tool' | 'range';
  /** Estimated tokens of the message as the model sees it (for a range, of all its messages). */
  tokens: number;
  /** range: the last sequence number it covers. */
  to?: number;
  /** range: how many messages it stands for. */
  count?: number;
  /** user: where it came from (absent on entries written before this field existed). */
  kind?: UserMessageKind;
  /** assistant: the ids of the tool calls it made, in order. */
  toolCallIds?: string[];
  /** assistant: estimated tokens of very large string arguments (e.g. a whole file for file-write). */
  largeArgsTokens?: number;
  /** tool: the id of the call this result answers. */
  toolCallId?: string;
  toolName?: string;
  spoolId?: number;
  /** Size of the full tool output in bytes (before truncation). */
  bytes?: number;
  ok?: boolean;
}

/** The last sequence number an entry covers: its own, or a range's end. */
export function lastSeqOfEntry(entry: LedgerEntry): number {
  return entry.to ?? entry.seq;
}

/** Whether the ledger already knows a sequence number, alone or inside a range. */
export function ledgerHasSeq(ledger: LedgerEntry[], seq: number): boolean {
  return ledger.some((known) => known.seq === seq || (known.seq < seq && lastSeqOfEntry(known) >= seq));
}

/**
 * Adds an entry unless its sequence number is already known (a replayed activity result), then
 * folds old runs of small messages once the ledger is long enough for that to matter.
 */
export function appendLedger(ledger: LedgerEntry[], entry: LedgerEntry): LedgerEntry[] {
  if (ledgerHasSeq(ledger, entry.seq)) return ledger;
  return foldLedger([...ledger, entry]);
}

/** Highest sequence number in the ledger, 0 when empty. */
export function lastSeqOf(ledger: LedgerEntry[]): number {
  return ledger.reduce((max, entry) => Math.max(max, lastSeqOfEntry(entry)), 0);
}

/** How many stored messages the entries stand for (a range counts all of its messages). */
export function messageCount(entries: LedgerEntry[]): number {
  return entries.reduce((sum, entry) => sum + (entry.role === 'range' ? (entry.count ?? 1) : 1), 0);
}

/** Estimated tokens of the whole ledger. */
export function ledgerTokens(ledger: LedgerEntry[]): number {
  return ledger.reduce((sum, entry) => sum + entry.tokens, 0);
}
