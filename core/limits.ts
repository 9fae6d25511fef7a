/**
 * Every threshold goalrun uses, in one place. Values from the spec name their requirement id.
 */

/** The model a goal uses when neither a flag nor the config names one. */
export const DEFAULT_MODEL = 'openai:gpt-4o-mini';

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
/** Arguments of a workflow-handled tool (todo-write, finish) travel in the activity result up to this size. */
export const WORKFLOW_TOOL_ARGS_MAX_BYTES = 64 * 1024;
/** How many recent actions the workflow keeps for `watch` and the Web UI. */
export const RECENT_ACTIONS_KEPT = 20;
/** Longest recent-action line kept in the goal's state (a provider's error can run for pages). */
export const RECENT_ACTION_MAX_CHARS = 200;
/** Longest objective a goal takes; a longer brief belongs in a file in the workspace that the objective names. */
export const MAX_OBJECTIVE_CHARS = 12_000;
/** Longest finish summary kept in the goal's state; the whole call stays in the transcript. */
export const FINISH_SUMMARY_MAX_CHARS = 8_000;
/** Models the usage breakdown counts apart; more are counted together under OTHER_MODELS_KEY. */
export const MAX_MODELS_IN_BREAKDOWN = 16;
/** Longest status reason kept in the goal's state. */
export const REASON_MAX_CHARS = 1_000;
/** Longest job command kept in the jobs registry. */
export const JOB_COMMAND_MAX_CHARS = 120;

/** A model step whose worker stops heartbeating for this long is retried elsewhere. */
export const MODEL_HEARTBEAT_TIMEOUT_MS = 15_000;
/**
 * A foreground worker sends an activity's heartbeats at least this often (the SDK holds them back for
 * 80 % of the heartbeat timeout by default): the host's short heartbeat timeout (host-placement.ts)
 * then has seconds of margin while the process lives.
 */
export const HOST_HEARTBEAT_THROTTLE_MS = 2_000;
/**
 * A workflow task bound for a foreground worker's sticky queue goes to the shared queue when that
 * worker has not taken it within this long (the SDK's default is 10 s): a `run` killed with -9 holds
 * up its goal's next workflow task no longer than this.
 */
export const HOST_STICKY_TIMEOUT_MS = 1_000;
/**
 * How often a model step heartbeats while it waits for the provider: well within a foreground host's
 * heartbeat timeout (workflows/host-placement.ts), whose worker sends each beat at once.
 */
export const MODEL_HEARTBEAT_INTERVAL_MS = 2_000;
/**
 * A model stream that sends nothing at all (no byte, not even an SSE comment or ping) for this
 * long is given up as stalled and retried (config stream_idle_timeout_s, --stream-idle-timeout).
 */
export const DEFAULT_STREAM_IDLE_TIMEOUT_S = 120;
/** A tool result the store refused (outage) is written again after this long, doubling… */
export const STORE_RETRY_INITIAL_MS = 500;
/** …up to this long between tries, for as long as the tool's attempt may run. */
export const STORE_RETRY_MAX_MS = 5_000;
/** How often a write waiting for the store heartbeats (well under TOOL_HEARTBEAT_TIMEOUT_MS). */
export const STORE_OUTAGE_HEARTBEAT_MS = 3_000;
/** A write waiting for the store gives up this long before its attempt's deadline. */
export const STORE_RETRY_MARGIN_MS = 10_000;
/**
 * How long the workflow's own store call (a local activity) retries before it gives up: its
 * schedule-to-close timeout. From patch store-outage-wait on, a call that gave up on a store outage
 * is made again (the goal shows `waiting for the store`), so this bounds one round, not the wait.
 */
export const STORE_CALL_WINDOW_MS = 30 * 60_000;
/** The pause before a call that gave up on a store outage is made again: no busy loop when it fails fast. */
export const STORE_WAIT_PAUSE_MS = 10_000;
/**
 * A goal whose task queue no worker polled for this long shows `waiting for a worker`. Temporal
 * records when a long poll began, and an idle worker's poll stays open for TEMPORAL_LONG_POLL_MS: a
 * queue counts as unpolled once its last poll began longer ago than both together.
 */
export const LIVENESS_POLL_GAP_MS = 30_000;
/** How long Temporal holds a worker's poll open when there is no task (matching.longPollExpirationInterval). */
export const TEMPORAL_LONG_POLL_MS = 60_000;
/** A running goal without a finished step for this many minutes shows `stalled` (config stalled_after_minutes). */
export const DEFAULT_STALLED_AFTER_MINUTES = 10;
/** Upper bound on one model call, streaming included. */
export const MODEL_STEP_TIMEOUT_MS = 15 * 60_000;
/** A tool whose worker stops heartbeating for this long is retried elsewhere. */
export const TOOL_HEARTBEAT_TIMEOUT_MS = 15_000;
/** Upper bound on one tool call; bash bounds its own commands below this. */
export const TOOL_STEP_TIMEOUT_MS = BASH_MAX_TIMEOUT_MS + 60_000;
/** A provider unreachable (connection refused, DNS) for this many minutes fails the goal. */
export const DEFAULT_PROVIDER_UNREACHABLE_MINUTES = 5;
/** Retries of a model step before the goal fails (provider outages longer than this end the goal). */
export const MODEL_STEP_MAX_ATTEMPTS = 12;
/** Retries of a tool call after an infrastructure fault (a tool's own error is a result, not a retry). */
export const TOOL_STEP_MAX_ATTEMPTS = 5;

/** Grace between SIGTERM and SIGKILL when a bash command's process group is killed. */
export const BASH_KILL_GRACE_MS = 2_000;
/** How often a running bash command heartbeats. */
export const BASH_HEARTBEAT_INTERVAL_MS = 1_000;
/** Default number of lines file-read returns. */
export const FILE_READ_DEFAULT_LIMIT = 2_000;
/** Longer lines are clipped by file-read (minified files would otherwise flood the context). */
export const FILE_READ_MAX_LINE_CHARS = 2_000;
/** Most paths one glob call lists. */
export const GLOB_MAX_RESULTS = 1_000;
/** Default and maximum number of matching lines one grep call lists. */
export const GREP_DEFAULT_MAX_RESULTS = 200;
export const GREP_MAX_RESULTS = 2_000;
/** Matching lines longer than this are clipped around the match by grep. */
export const GREP_MAX_LINE_CHARS = 300;
/** grep skips files larger than this (logs, dumps); bash with rg or grep can still search them. */
export const GREP_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** Each background job keeps this much of its combined output, oldest bytes dropped (S-JOBS: 1 MiB). */
export const JOB_OUTPUT_BUFFER_BYTES = 1024 * 1024;
/** Default and maximum bytes one read of a job's output returns. */
export const JOB_OUTPUT_DEFAULT_LIMIT = 16_000;
export const JOB_OUTPUT_MAX_LIMIT = 64_000;
/**
 * Longest `job-output` wait_seconds: the model waits for a slow job in one call instead of asking
 * again and again (which the runaway breaker counts as a loop); well within TOOL_STEP_TIMEOUT_MS.
 */
export const JOB_OUTPUT_MAX_WAIT_SECONDS = 600;
/** Background jobs one goal may have running at once. */
export const MAX_RUNNING_JOBS_PER_SESSION = 16;
/** Finished jobs remembered per goal, for listing and reading their last output. */
export const MAX_FINISHED_JOBS_PER_SESSION = 64;
/** A grep search is killed after this long (the pattern runs in its own process, never the worker's). */
export const GREP_TIMEOUT_MS = 60_000;
/** After its window, file-read counts lines for at most this many bytes to report the file's total. */
export const FILE_READ_COUNT_AHEAD_BYTES = 4 * 1024 * 1024;

/** Longest `--append-system-prompt` text: it travels in the goal's definition (a workflow payload). */
export const APPENDED_PROMPT_MAX_CHARS = 8_000;
/** Largest `--output-schema` (its JSON): it travels in the goal's definition (a workflow payload). */
export const OUTPUT_SCHEMA_MAX_BYTES = 8_192;
