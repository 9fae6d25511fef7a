/**
 * Size bounds of compaction's text pieces (stubs, summarizer input, summaries), in one place so
 * that the trade-off between keeping the gist and freeing tokens can be tuned without hunting.
 * "chars" are UTF-16 units as `String.length` counts them, except where a constant says otherwise.
 */

/** An args string longer than this is clipped in an args digest. */
export const DIGEST_LONG_STRING_CHARS = 80;
/** How much of a clipped args string the digest keeps. */
export const DIGEST_KEPT_STRING_CHARS = 60;
/** Cap on a whole args digest (spec: "an args digest", not the args). */
export const DIGEST_MAX_CHARS = 240;
/** Nesting depth past which an args digest shows `…` instead of the value. */
export const DIGEST_MAX_DEPTH = 6;

/** Cap on the first and last line quoted in a stub. */
export const STUB_EDGE_LINE_CHARS = 120;
/** Head and tail lines of the excerpt a stub carries when the output has no spool copy. */
export const STUB_EXCERPT_HEAD_LINES = 5;
export const STUB_EXCERPT_TAIL_LINES = 5;
/** Cap on that excerpt: it must stay far smaller than the output it replaces. */
export const STUB_EXCERPT_MAX_CHARS = 1_200;
/** Cap on one line of that excerpt. */
export const STUB_EXCERPT_LINE_CHARS = 200;

/** Longest line any excerpt keeps whole; a minified file must not eat a whole item's budget. */
export const EXCERPT_LINE_CHARS = 400;
/** Shares of an excerpt's budget for the head and the tail; errors from the middle get the rest. */
export const EXCERPT_HEAD_SHARE = 0.35;
export const EXCERPT_TAIL_SHARE = 0.35;
/** Without error lines to favour, the tail (where results and exit codes are) gets a bit more. */
export const EXCERPT_PLAIN_HEAD_SHARE = 0.45;
/** Room kept for one `… N lines omitted …` marker when budgeting an excerpt. */
export const EXCERPT_MARKER_RESERVE = 32;

/** Per-item bounds of the summarizer input, tried in order until the whole input fits. */
export const SUMMARIZER_ITEM_BOUNDS = [6_000, 3_000, 1_500, 800, 400, 200];
/** Cap on the objective quoted to the summarizer, in estimated tokens. */
export const SUMMARIZER_OBJECTIVE_TOKENS = 1_000;
/** Share of the summarizer's token budget the objective may take. */
export const SUMMARIZER_OBJECTIVE_SHARE = 0.15;
/**
 * Share of the summarizer's token budget the earlier summary may take. It comes first: its facts exist
 * nowhere else in context, while the span's items can be excerpted. Beyond it, the part of the earlier
 * summary the summarizer could not see is carried over verbatim instead.
 */
export const SUMMARIZER_PREVIOUS_SHARE = 0.6;
/** Cap on the focus hint (`/compact TOPIC`). */
export const SUMMARIZER_FOCUS_CHARS = 500;
/** Clipped args strings in the summarizer input keep this share of the item bound (edits matter). */
export const SUMMARIZER_ARGS_STRING_SHARE = 0.4;

/** Cap on one change description in the files-modified list. */
export const CHANGE_SNIPPET_CHARS = 40;
/** Changes listed per file; older ones are counted, not listed. */
export const CHANGES_SHOWN_PER_FILE = 5;
/** Cap on a path in the files-modified list (paths are never dropped, only clipped). */
export const PATH_MAX_CHARS = 300;
/** Cap on one command in the "possibly changed by commands" list. */
export const COMMAND_MAX_CHARS = 200;
/** Commands listed as possibly changing files; older ones are counted, not listed. */
export const COMMANDS_SHOWN = 20;

/** Extracted summary: the user messages quoted, newest last, and the cap on each. */
export const EXTRACTED_USER_MESSAGES = 3;
export const EXTRACTED_USER_MESSAGE_CHARS = 1_500;
/** Extracted summary: the assistant notes quoted, and the cap on each. */
export const EXTRACTED_ASSISTANT_NOTES = 3;
export const EXTRACTED_ASSISTANT_NOTE_CHARS = 800;
/** Extracted summary: recent commands listed, and the cap on each. */
export const EXTRACTED_RECENT_COMMANDS = 8;
/** Extracted summary: failed calls whose error output is quoted, and the cap on each excerpt. */
export const EXTRACTED_FAILED_CALLS = 3;
export const EXTRACTED_ERROR_CHARS = 1_500;
/** Extracted summary: spool ids listed under References, newest kept. */
export const EXTRACTED_SPOOL_REFERENCES = 10;
