/**
 * The workflow's view of the conversation: one small entry per stored message. The bodies live in
 * the session store; activities receive sequence numbers, never the transcript.
 */

/** Where a user-role message came from; compaction keeps the latest real user and steering ones. */
export type UserMessageKind = 'first' | 'continuation' | 'resume' | 'steering' | 'summary';

/** One message of the transcript, as the workflow knows it. */
export interface LedgerEntry {
  seq: number;
  role: 'user' | 'assistant' | 'tool';
  /** Estimated tokens of the message as the model sees it. */
  tokens: number;
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

/** Adds an entry unless its sequence number is already known (a replayed activity result). */
export function appendLedger(ledger: LedgerEntry[], entry: LedgerEntry): LedgerEntry[] {
  if (ledger.some((known) => known.seq === entry.seq)) return ledger;
  return [...ledger, entry];
}

/** Highest sequence number in the ledger, 0 when empty. */
export function lastSeqOf(ledger: LedgerEntry[]): number {
  return ledger.reduce((max, entry) => Math.max(max, entry.seq), 0);
}

/** Estimated tokens of the whole ledger. */
export function ledgerTokens(ledger: LedgerEntry[]): number {
  return ledger.reduce((sum, entry) => sum + entry.tokens, 0);
}
