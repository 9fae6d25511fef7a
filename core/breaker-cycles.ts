/**
 * The repeat rule of goals of this build (issue 26.2, 24.6): a warning first, then a pause. A call
 * and its result that come back the same `repeat_limit` times in a row, or a short cycle of them
 * (A B A B …, up to MAX_CYCLE_LENGTH calls), get the model a notice; if the repetition goes on
 * REPEATS_AFTER_WARNING more times, the goal pauses. A repetition whose cycle holds a call that
 * waited on purpose (core/waiting-call.ts) counts against `wait_limit` instead. Workspace and
 * workflow tools both count (a `finish` vetoed by a stop hook the same way is a repeat). Pure.
 */
import {
  type BreakerCall,
  type BreakerOutcome,
  type BreakerSettings,
  type BreakerState,
  callText,
  DEFAULT_WAIT_LIMIT,
} from './runaway-breaker';
import { clip } from './text';
import { textDigest } from './text-digest';
import { TOOL } from './tool-names';
import { WAITING_CALL_MIN_SECONDS } from './waiting-call';
import type { WorkflowToolArgs } from './workflow-tool-args';

/** Longest cycle found: A B A B is a repetition; longer patterns are more likely honest work. */
export const MAX_CYCLE_LENGTH = 3;
/** After the warning, the repetition may go on this many more times before the goal pauses. */
export const REPEATS_AFTER_WARNING = 3;
/** Longest call summary the state keeps (it is a workflow payload). */
const SUMMARY_MAX_CHARS = 160;

/** A repeat rule's outcome: a trip pauses the goal, a warning is a notice for the model. */
export interface CycleOutcome extends BreakerOutcome {
  warning: string | null;
}

/** One answered call: its digests (`call`, `output`), its summary, and whether it waited on purpose. */
export interface AnsweredCall {
  summary: string;
  call: string;
  output: string;
  waited: boolean;
}

/** A call was answered (a workspace or a workflow tool): counts it, and warns or trips. */
export function afterAnsweredCall(
  state: BreakerState,
  settings: BreakerSettings,
  answered: AnsweredCall,
): CycleOutcome {
  const current: BreakerCall = {
    key: `${answered.call}\n${answered.output}`,
    summary: clip(answered.summary, SUMMARY_MAX_CHARS),
    waited: answered.waited,
  };
  const before = state.calls ?? [];
  const runs = Array.from({ length: MAX_CYCLE_LENGTH }, (_, index) => {
    const length = index + 1;
    const matches = before.length >= length && before[before.length - length].key === current.key;
    return matches ? (state.runs?.[index] ?? 0) + 1 : 0;
  });
  const calls = [...before, current].slice(-MAX_CYCLE_LENGTH);
  // How many times the cycle came round: a run of m matches at length n is ⌊m/n⌋ + 1 cycles.
  let length = 1;
  let times = 1;
  runs.forEach((run, index) => {
    const cycles = Math.floor(run / (index + 1)) + 1;
    if (cycles > times) {
      times = cycles;
      length = index + 1;
    }
  });
  const cycle = calls.slice(-length);
  const waited = cycle.some((call) => call.waited);
  const limit = waited ? (settings.waitLimit ?? DEFAULT_WAIT_LIMIT) : settings.repeatLimit;
  const on = limit > 0 && times >= limit;
  const next: BreakerState = { ...state, calls, runs, warned: on && (state.warned ?? false) };
  const what = cycleText(cycle);
  if (on && next.warned && times >= limit + REPEATS_AFTER_WARNING) {
    const tripped = `${what} returned the same ${length === 1 ? 'output' : 'outputs'} ${times} times in a row${
      waited ? ' (calls that waited)' : ''
    }, after a warning at ${limit}`;
    return { state: { ...next, tripped }, trip: tripped, warning: null };
  }
  if (on && !next.warned) {
    return {
      state: { ...next, warned: true },
      trip: null,
      warning: warningText(what, times, settings, waited),
    };
  }
  return { state: next, trip: null, warning: null };
}

/** What the model is told at the limit: what it repeats, what to do instead, and what comes next. */
function warningText(what: string, times: number, settings: BreakerSettings, waited: boolean): string {
  const waitLimit = settings.waitLimit ?? DEFAULT_WAIT_LIMIT;
  return [
    `runaway breaker: ${what} returned the same result ${times} times in a row${waited ? ', even with waiting' : ''}.`,
    'Repeating it will not change the answer: change your approach, or call finish with status "blocked" and say what blocks you.',
    'To wait for something slow, do not poll it with the same call: start it as a background job (bash with run_in_background)',
    'and read it with job-output and wait_seconds (e.g. 60: it answers as soon as there is new output or the job ends),',
    `or wait inside one call (bash \`sleep 30; <check>\`); a call that waits ${WAITING_CALL_MIN_SECONDS} s or more may repeat up to ${waitLimit} times.`,
    `If the repetition goes on ${REPEATS_AFTER_WARNING} more times, the goal is paused until a person looks at it.`,
  ].join(' ');
}

/** ``the same bash call `ls -1` `` or ``the same cycle of 2 calls (bash call `a`, bash call `b`)``. */
function cycleText(cycle: BreakerCall[]): string {
  if (cycle.length === 1) return `the same ${callText(cycle[0].summary)}`;
  return `the same cycle of ${cycle.length} calls (${cycle.map((call) => callText(call.summary)).join(', ')})`;
}

/**
 * A workflow tool call (todo-write, finish) as the repeat rule sees it. A `finish` is the same call
 * whatever its summary says (the model rewords it; what it asks, to end with a status, is the same),
 * so a finish vetoed by a stop hook with the same reason is a repeat.
 */
export function answeredWorkflowCall(toolName: string, args: WorkflowToolArgs, text: string): AnsweredCall {
  const asked =
    args.tool === TOOL.finish
      ? args.parsed.ok
        ? args.parsed.args.status
        : args.parsed.error
      : JSON.stringify(args.parsed);
  return {
    summary:
      args.tool === TOOL.finish && args.parsed.ok ? `${toolName}: ${args.parsed.args.status}` : toolName,
    call: textDigest(`${toolName}\n${asked}`),
    output: textDigest(text),
    waited: false,
  };
}
