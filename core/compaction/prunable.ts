/**
 * Which ledger entries pruning can ever shrink: large tool outputs (to stubs) and assistant messages with
 * very large arguments (elided). Everything else is shown as it is, whatever compaction does.
 */
import type { LedgerEntry } from '../ledger';
import {
  LARGE_ARG_MIN_TOKENS,
  LARGE_OUTPUT_MIN_TOKENS,
  STUB_EXCERPT_TOKENS,
  STUB_TOKENS,
} from './thresholds';

/** Estimated tokens of the stub that would replace a tool output (with an excerpt when it has no spool copy). */
export function stubSize(entry: LedgerEntry): number {
  return STUB_TOKENS + (entry.spoolId === undefined ? STUB_EXCERPT_TOKENS : 0);
}

/** A tool output large enough to be replaced by a stub. */
export function isLargeOutput(entry: LedgerEntry): boolean {
  return entry.role === 'tool' && entry.tokens > LARGE_OUTPUT_MIN_TOKENS && entry.tokens > stubSize(entry);
}

/** An assistant message whose very large arguments can be elided. */
export function hasLargeArgs(entry: LedgerEntry): boolean {
  return entry.role === 'assistant' && (entry.largeArgsTokens ?? 0) >= LARGE_ARG_MIN_TOKENS;
}
