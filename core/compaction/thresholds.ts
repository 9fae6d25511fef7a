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
/**
 * The low-water mark a compaction aims for, as a percentage of the usable input (`auto_compact_target_pct`).
 * Compacting only to just under the threshold lets one step of growth cross it again, so every other step
 * compacts; the gap between threshold and mark is what spaces compactions out.
 */
export const AUTO_COMPACT_TARGET_PCT_DEFAULT = 50;

/** The newest part of the conversation that the first pruning stage leaves alone: a fifth of the window… */
export const PROTECTED_WINDOW_FRACTION = 1 / 5;
/** …but never more than this many tokens. */
export const PROTECTED_WINDOW_MAX_TOKENS = 40_000;

/** Tool exchanges kept verbatim at the end of the context (an assistant message with all its results). */
export const TAIL_TOOL_EXCHANGES = 3;
/** The same on a forced (last-resort) compaction. */
export const TAIL_TOOL_EXCHANGES_FORCED = 2;

/**
 * Steering messages of the compacted span always kept verbatim after the summary, whatever their size:
 * the spec's "up to three of the most recent user requests and steering messages". Every older steering
 * message is kept too, within KEPT_STEERING_MAX_SHARE (and, in executions started before that rule,
 * this is all that was kept).
 */
export const KEPT_USER_MESSAGES = 3;
/**
 * Steering messages older than the latest three stay verbatim while all the kept ones together take at
 * most this share of the usable input. Only a flood of long messages reaches it (one is at most
 * MAX_STEERING_CHARS, core/goal-session.ts: about 8,000 tokens of prose): then the oldest go into the summary
 * like the rest of the span, so that the goal still fits its window; the store keeps every one.
 */
export const KEPT_STEERING_MAX_SHARE = 0.25;
/**
 * Which user messages count as "user requests and steering messages". Continuation and resume messages
 * are written by goalrun itself (they restate the objective and the progress, which the first message
 * and the summary already carry), so only what a person sent into the running goal is kept: `steer`
 * and `resume --message` both store it as kind steering.
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
/**
 * …but never more than this share of the usable input: in a small window a summary that size would be
 * judged useless, while the summarizer is told to be brief and real summaries there are far smaller.
 */
export const SUMMARY_ESTIMATE_MAX_SHARE = 0.1;
/**
 * A summary is worth a summarizer call when what it replaces (as shown, after pruning) is at least this
 * share of the usable input. Below it a summary frees too little room to space compactions out, and
 * calling a model (10–30 s, and money) for it every few steps is the thrash this rule prevents; stubs
 * are left to pile up until summarizing them pays. A manual compaction, or a request that would not fit
 * at all, summarizes whatever there is.
 */
export const SUMMARY_MIN_SPAN_SHARE = 0.1;
/** The failure reason quoted in a transcript note is clipped to this many characters. */
export const FAILURE_REASON_MAX_CHARS = 200;

/**
 * The ledger folds old runs of small messages into range entries once it has this many entries. Below
 * it, folding would save nothing that matters, and one entry per message is easier to inspect.
 */
export const LEDGER_FOLD_MIN_ENTRIES = 64;
/**
 * Budget for the JSON of the control state a workflow carries (goal state with its ledger) and passes
 * over continue-as-new: far under Temporal's 512 KiB payload warning, whatever the model's window.
 */
export const CONTROL_STATE_BUDGET_BYTES = 256 * 1024;
/** The summarizer's request gets at most this share of the usable input budget. */
export const SUMMARIZER_INPUT_SHARE = 0.6;
