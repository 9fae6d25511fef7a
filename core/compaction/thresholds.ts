/**
 * Every number behind compaction (spec S-COMPACT, S-AUTO, S-BUDGET), in one place.
 */
import type { UserMessageKind } from '../ledger';
import { CHARS_PER_TOKEN, SPOOL_MIN_TOKENS } from '../limits';

/** Auto-compact is on unless the user turns it off (`auto_compact_enabled`). */
export const AUTO_COMPACT_ENABLED_DEFAULT = true;
/** Percentage of the model's effective window at which auto-compact triggers (`auto_compact_threshold_pct`). */
export const AUTO_COMPACT_THRESHOLD_PCT_DEFAULT = 85;
/** Consecutive summarizer failures before auto-compact pauses (`auto_compact_max_failures`). */
export const AUTO_COMPACT_MAX_FAILURES_DEFAULT = 3;

/** The newest part of the conversation that the first pruning stage leaves alone: a fifth of the window… */
export const PROTECTED_WINDOW_FRACTION = 1 / 5;
/** …but never more than this many tokens. */
export const PROTECTED_WINDOW_MAX_TOKENS = 40_000;

/** Tool exchanges kept verbatim at the end of the context (an assistant message with all its results). */
export const TAIL_TOOL_EXCHANGES = 3;
/** The same on a forced (last-resort) compaction. */
export const TAIL_TOOL_EXCHANGES_FORCED = 2;

/** User messages of the compacted span kept verbatim after the summary. */
export const KEPT_USER_MESSAGES = 3;
/**
 * Which user messages count as "user requests and steering messages". Continuation and resume messages
 * are written by goalrun itself (they restate the objective and the progress, which the first message
 * and the summary already carry), so only what a person sent into the running goal is kept.
 */
export const KEPT_USER_KINDS: readonly UserMessageKind[] = ['steering'];

/** A tool result larger than this is spooled when it runs, so it can be replaced by a stub (~500 tokens). */
export const LARGE_OUTPUT_MIN_TOKENS = SPOOL_MIN_TOKENS;
/**
 * Estimated tokens of a pruned-output stub: size, spool id, tool name, args digest (≤ 240 chars), status and
 * the first and last line (≤ 120 chars each), as stub.ts renders it under the bounds of text-limits.ts.
 */
export const STUB_TOKENS = 200;
/** Extra tokens of a stub for an output without a spool copy, which carries a head/tail excerpt (≤ 1,200 chars). */
export const STUB_EXCERPT_TOKENS = 300;
/**
 * An assistant message's large arguments are elided when they add up to this many tokens. The ledger
 * counts only strings of 4,000 chars and more (ledger-entry.ts), which is the same size in tokens.
 */
export const LARGE_ARG_MIN_TOKENS = 4_000 / CHARS_PER_TOKEN;

/** Expected size of a structured summary, for judging whether summarizing can get under the threshold. */
export const SUMMARY_TOKENS_ESTIMATE = 2_000;
/** The failure reason quoted in a transcript note is clipped to this many characters. */
export const FAILURE_REASON_MAX_CHARS = 200;
