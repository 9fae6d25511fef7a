/**
 * Every threshold goalrun uses, in one place. Values from the spec name their requirement id.
 */

/** Consecutive iterations without progress before a goal is blocked. */
export const DEFAULT_NO_PROGRESS_LIMIT = 3;
/** Default iteration (agent turn) limit of a goal. */
export const DEFAULT_MAX_ITERATIONS = 50;
/** Default step (model call) limit of a goal. */
export const DEFAULT_MAX_STEPS = 500;
/** Default wall-clock limit of a goal, in minutes. */
export const DEFAULT_MAX_MINUTES = 240;

/** Rough characters per token, used where no tokenizer is at hand. */
export const CHARS_PER_TOKEN = 4;
/** A tool result over this many tokens is written to the spool when the tool runs (S-SPOOL: ~500 tokens). */
export const SPOOL_MIN_TOKENS = 500;
/** A tool result over this many characters reaches the model as a head plus a footer naming its spool id. */
export const TOOL_RESULT_MAX_CHARS = 16_000;
/** Default page size of the tool-output tool, in bytes. */
export const TOOL_OUTPUT_DEFAULT_LIMIT = 4_000;
/** Upper bound on one tool-output page, in bytes. */
export const TOOL_OUTPUT_MAX_LIMIT = 64_000;

/** Default and maximum time a foreground bash command may run. */
export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_MAX_TIMEOUT_MS = 60 * 60_000;
/** How much of a bash command's output is kept in memory (the rest is counted, not kept). */
export const BASH_OUTPUT_CAP_BYTES = 8 * 1024 * 1024;

/** Progress during a step is persisted at most this often (S-SAVE). */
export const PROGRESS_SAVE_INTERVAL_MS = 2_000;
/** Tool-call arguments up to this size travel inline in activity results; larger ones stay in the store. */
export const INLINE_ARGS_MAX_BYTES = 2_048;
/** How many recent actions the workflow keeps for `watch` and the Web UI. */
export const RECENT_ACTIONS_KEPT = 20;
