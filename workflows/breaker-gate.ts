/**
 * The runaway breaker in the workflow (rules in core/runaway-breaker.ts and core/breaker-cycles.ts):
 * after each model turn and each tool call the step asks it, and a rule that trips pauses the goal at
 * the next step boundary, with the rule and its evidence as the reason; no model call is made until
 * unpause, which tells the model why it was stopped (boundary.ts). Goals of the command queue only.
 * Goals of this build (PATCH.breakerWarnsFirst) first get a notice at the end of the step, count
 * workflow tools and cycles too, and start counting afresh when a person unpauses or steers them.
 */
import type { RunToolResult, ToolCallRef } from '../activities/types';
import { afterAnsweredCall, answeredWorkflowCall, type CycleOutcome } from '../core/breaker-cycles';
import {
  afterModelTurn,
  afterToolCall,
  afterUnpause,
  type BreakerOutcome,
  breakerSettings,
  INITIAL_BREAKER,
  restartCounts,
} from '../core/runaway-breaker';
import type { SpendAmount } from '../core/spend-cap';
import type { WorkflowToolArgs } from '../core/workflow-tool-args';
import type { WorkflowToolOutcome } from '../core/workflow-tools';
import type { GoalRun } from './goal-run-port';
import { PATCH } from './patches';

/** Warnings given during the step, per run: written as one notice when the step's calls are answered. */
const warnings = new WeakMap<GoalRun, string[]>();

/** A model turn was recorded: `spent` is what it cost (the goal's spend after less before). */
export function breakerAfterTurn(run: GoalRun, toolCalls: number, spent: SpendAmount): void {
  if (!run.features[PATCH.commandQueue]) return;
  apply(
    run,
    afterModelTurn(current(run), breakerSettings(run.state.goal.breaker), {
      toolCalls,
      atMs: Date.now(),
      costUsd: spent.costUsd,
      tokens: spent.tokens,
    }),
  );
}

/** A workspace tool call was answered. Results recorded before digests existed compare their edges. */
export function breakerAfterTool(run: GoalRun, call: ToolCallRef, result: RunToolResult): void {
  if (!run.features[PATCH.commandQueue]) return;
  const answered = {
    summary: call.summary,
    call: result.callDigest ?? `${call.toolName}\n${call.summary}`,
    output: result.outputDigest ?? `${result.ok}\n${result.firstLine}\n${result.lastLine}`,
  };
  const settings = breakerSettings(run.state.goal.breaker);
  if (!run.features[PATCH.breakerWarnsFirst]) {
    apply(run, afterToolCall(current(run), settings, answered));
    return;
  }
  applyCycle(run, afterAnsweredCall(current(run), settings, { ...answered, waited: result.waited ?? false }));
}

/** A workflow tool call (todo-write, finish) was answered without ending the goal. */
export function breakerAfterWorkflowTool(
  run: GoalRun,
  toolName: string,
  args: WorkflowToolArgs,
  outcome: WorkflowToolOutcome,
): void {
  if (!run.features[PATCH.commandQueue] || !run.features[PATCH.breakerWarnsFirst] || outcome.finished) return;
  const settings = breakerSettings(run.state.goal.breaker);
  applyCycle(
    run,
    afterAnsweredCall(current(run), settings, answeredWorkflowCall(toolName, args, outcome.text)),
  );
}

/** The warning of the step, once its calls are all answered (a notice between tool results would split them). */
export function takeBreakerWarning(run: GoalRun): string | null {
  const pending = warnings.get(run);
  warnings.delete(run);
  return pending?.length ? pending.join('\n') : null;
}

/**
 * A steering message was delivered: a person is looking, so the counts start again, and a goal the
 * breaker paused goes on (the unpause tells the model why it was stopped). Returns whether it was
 * unpaused, or why it stays paused (a person paused it, or it waits for quota).
 */
export function breakerAfterSteering(run: GoalRun): { unpaused?: true; paused?: string } {
  if (!run.features[PATCH.breakerWarnsFirst]) return {};
  const breaker = run.state.breaker;
  if (breaker) run.state = { ...run.state, breaker: restartCounts(breaker) };
  if (!run.state.paused) return {};
  if (breaker?.tripped && !run.state.pauseReason) {
    run.session.unpause();
    return { unpaused: true };
  }
  return { paused: run.state.pauseReason ?? 'paused by request' };
}

/** The goal goes on after a pause: the note for the model when the breaker paused it, else null. */
export function breakerOnUnpause(run: GoalRun): string | null {
  const breaker = run.state.breaker;
  if (!breaker) return null;
  if (breaker.tripped) {
    const { state, note } = afterUnpause(breaker);
    run.state = { ...run.state, breaker: state };
    return note;
  }
  // Unpaused by a person after their own pause: the counts start again too.
  if (run.features[PATCH.breakerWarnsFirst]) run.state = { ...run.state, breaker: restartCounts(breaker) };
  return null;
}

/** A resumed execution starts the breaker afresh: old counts and an old trip reason do not carry over. */
export function breakerOnResume(run: GoalRun): void {
  if (!run.features[PATCH.breakerWarnsFirst]) return;
  run.state = { ...run.state, breaker: undefined, pauseReason: null };
}

function current(run: GoalRun) {
  return run.state.breaker ?? INITIAL_BREAKER;
}

function applyCycle(run: GoalRun, outcome: CycleOutcome): void {
  if (outcome.warning) {
    warnings.set(run, [...(warnings.get(run) ?? []), outcome.warning]);
    run.session.note(`runaway breaker warned the model: ${outcome.warning.split('. ')[0]}`);
  }
  apply(run, outcome);
}

function apply(run: GoalRun, outcome: BreakerOutcome): void {
  run.state = { ...run.state, breaker: outcome.state };
  if (!outcome.trip || run.state.paused) return;
  // A person looks at it now: the no-progress count starts again rather than blocking the goal on unpause.
  run.state = { ...run.state, paused: true, noProgress: 0 };
  run.session.note(`paused by the runaway breaker: ${outcome.trip}`);
}
