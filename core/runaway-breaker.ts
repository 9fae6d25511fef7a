/**
 * The runaway breaker (issue 18): pauses, never fails, a goal that spins. Three rules, each set under
 * `breaker.*` in the config:
 * - the same tool call (same name, same arguments) with the same result, `repeat_limit` times in a row;
 * - `idle_turns` model turns in a row with no tool call and no finish;
 * - spend or tokens per minute over a rate, over a sliding window (off unless a rate is set).
 * A command run again with a changing output (a test run while fixing code) is honest work: only an
 * identical result counts. Goals of this build warn before they pause, count cycles and workflow
 * tools, and give calls that waited a higher limit (core/breaker-cycles.ts). Pure, so the workflow
 * and the unit tests share it.
 */

/** Default `breaker.repeat_limit`: an agent retrying a flaky call twice or three times is normal; five identical answers are not. */
export const DEFAULT_REPEAT_LIMIT = 5;
/**
 * Default `breaker.wait_limit`: a call that waited on purpose (core/waiting-call.ts) is polling
 * something slow, so its identical answers are allowed many more repeats than a loop's.
 */
export const DEFAULT_WAIT_LIMIT = 20;
/** Default `breaker.idle_turns`: a model that answers in prose three turns running is talking, not working. */
export const DEFAULT_IDLE_TURNS = 3;
/** The sliding window of the rate rule. */
export const DEFAULT_RATE_WINDOW_MS = 60_000;
/** Entries the rate window keeps at most (workflow state stays small however fast calls come). */
const RATE_ENTRIES_KEPT = 200;

/** The breaker's rules; 0 turns a count rule off, an absent rate leaves the rate rule off. */
export interface BreakerSettings {
  repeatLimit: number;
  /** The repeat limit of calls that waited (0: off); absent in goals started before it existed. */
  waitLimit?: number;
  idleTurns: number;
  maxUsdPerMinute?: number;
  maxTokensPerMinute?: number;
  windowMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = {
  repeatLimit: DEFAULT_REPEAT_LIMIT,
  waitLimit: DEFAULT_WAIT_LIMIT,
  idleTurns: DEFAULT_IDLE_TURNS,
  windowMs: DEFAULT_RATE_WINDOW_MS,
};

/** What the breaker remembers, in the goal's state. */
export interface BreakerState {
  /** The latest workspace tool call and how many times in a row it answered the same. */
  repeat: { call: string; output: string; summary: string; count: number } | null;
  /** Model turns in a row without a tool call. */
  idleTurns: number;
  /** Recent model calls, for the rate rule. */
  recent: Array<{ atMs: number; costUsd: number; tokens: number }>;
  /** Why the breaker paused the goal, until the unpause tells the model. */
  tripped: string | null;
  /** The latest calls, newest last (core/breaker-cycles.ts): how cycles are found. */
  calls?: BreakerCall[];
  /** Per cycle length (1, 2, 3): how many calls in a row matched the call that many before. */
  runs?: number[];
  /** The model was warned about the repetition going on now. */
  warned?: boolean;
}

/** One call as the cycle rule remembers it: its call and result digests, and whether it waited. */
export interface BreakerCall {
  key: string;
  summary: string;
  waited: boolean;
}

export const INITIAL_BREAKER: BreakerState = { repeat: null, idleTurns: 0, recent: [], tripped: null };

/** The state after an event, and the reason when a rule tripped. */
export interface BreakerOutcome {
  state: BreakerState;
  trip: string | null;
}

/** A workspace tool call answered: `call` identifies name and arguments, `output` the result. */
export function afterToolCall(
  state: BreakerState,
  settings: BreakerSettings,
  call: { summary: string; call: string; output: string },
): BreakerOutcome {
  const same = state.repeat && state.repeat.call === call.call && state.repeat.output === call.output;
  const count = same ? state.repeat!.count + 1 : 1;
  const next: BreakerState = {
    ...state,
    repeat: { call: call.call, output: call.output, summary: call.summary, count },
  };
  if (settings.repeatLimit > 0 && count >= settings.repeatLimit) {
    return trip(next, `the same ${callText(call.summary)} returned the same output ${count} times in a row`);
  }
  return { state: next, trip: null };
}

/** A model call answered: its tool calls, when, and what it cost. */
export function afterModelTurn(
  state: BreakerState,
  settings: BreakerSettings,
  turn: { toolCalls: number; atMs: number; costUsd: number; tokens: number },
): BreakerOutcome {
  const idleTurns = turn.toolCalls === 0 ? state.idleTurns + 1 : 0;
  // Kept only while a rate rule is on: otherwise each step's state (a workflow payload) would carry them.
  const rateRuleOn = settings.maxUsdPerMinute !== undefined || settings.maxTokensPerMinute !== undefined;
  const recent = rateRuleOn
    ? [...state.recent, { atMs: turn.atMs, costUsd: turn.costUsd, tokens: turn.tokens }]
        .filter((entry) => entry.atMs > turn.atMs - settings.windowMs)
        .slice(-RATE_ENTRIES_KEPT)
    : [];
  const next: BreakerState = { ...state, idleTurns, recent };
  if (settings.idleTurns > 0 && idleTurns >= settings.idleTurns) {
    return trip(next, `${idleTurns} model turns in a row without a tool call or finish`);
  }
  const minutes = settings.windowMs / 60_000;
  const usd = recent.reduce((sum, entry) => sum + entry.costUsd, 0);
  if (settings.maxUsdPerMinute !== undefined && usd > settings.maxUsdPerMinute * minutes) {
    return trip(
      next,
      `$${usd.toFixed(4)} spent in the last ${minutes} minute(s), over breaker.max_usd_per_minute ${settings.maxUsdPerMinute}`,
    );
  }
  const tokens = recent.reduce((sum, entry) => sum + entry.tokens, 0);
  if (settings.maxTokensPerMinute !== undefined && tokens > settings.maxTokensPerMinute * minutes) {
    return trip(
      next,
      `${tokens} tokens in the last ${minutes} minute(s), over breaker.max_tokens_per_minute ${settings.maxTokensPerMinute}`,
    );
  }
  return { state: next, trip: null };
}

/** The goal goes on after a trip: the counts start again, and the model is told why it was stopped. */
export function afterUnpause(state: BreakerState): { state: BreakerState; note: string | null } {
  if (!state.tripped) return { state, note: null };
  return {
    state: { ...INITIAL_BREAKER },
    note: `you were paused by the runaway breaker (${state.tripped}); a person let you go on: do not repeat that, try another way or finish`,
  };
}

/**
 * A person looked (an unpause, a steering message): every count starts again. The trip reason stays
 * until the unpause that tells the model about it.
 */
export function restartCounts(state: BreakerState): BreakerState {
  return { ...INITIAL_BREAKER, recent: state.recent, tripped: state.tripped };
}

/** The settings of a goal: its own over the defaults. */
export function breakerSettings(custom: Partial<BreakerSettings> | undefined): BreakerSettings {
  return { ...DEFAULT_BREAKER, ...custom };
}

function trip(state: BreakerState, evidence: string): BreakerOutcome {
  return { state: { ...state, tripped: evidence }, trip: evidence };
}

/** `bash: ls -1` → ``bash call `ls -1` ``. */
export function callText(summary: string): string {
  const at = summary.indexOf(': ');
  return at < 0 ? `${summary} call` : `${summary.slice(0, at)} call \`${summary.slice(at + 2)}\``;
}
