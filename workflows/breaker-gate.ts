/**
 * The runaway breaker in the workflow (rules in core/runaway-breaker.ts): after each model turn and
 * each workspace tool call the step asks it, and a rule that trips pauses the goal at the next step
 * boundary, with the rule and its evidence as the reason; no model call is made until unpause, which
 * tells the model why it was stopped (boundary.ts). Goals of the command queue only.
 */
import type { RunToolResult, ToolCallRef } from '../activities/types';
import {
  afterModelTurn,
  afterToolCall,
  type BreakerOutcome,
  breakerSettings,
  INITIAL_BREAKER,
} from '../core/runaway-breaker';
import type { SpendAmount } from '../core/spend-cap';
import type { GoalRun } from './goal-run-port';
import { PATCH } from './patches';

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
  apply(
    run,
    afterToolCall(current(run), breakerSettings(run.state.goal.breaker), {
      summary: call.summary,
      call: result.callDigest ?? `${call.toolName}\n${call.summary}`,
      output: result.outputDigest ?? `${result.ok}\n${result.firstLine}\n${result.lastLine}`,
    }),
  );
}

function current(run: GoalRun) {
  return run.state.breaker ?? INITIAL_BREAKER;
}

function apply(run: GoalRun, outcome: BreakerOutcome): void {
  run.state = { ...run.state, breaker: outcome.state };
  if (!outcome.trip || run.state.paused) return;
  // A person looks at it now: the no-progress count starts again rather than blocking the goal on unpause.
  run.state = { ...run.state, paused: true, noProgress: 0 };
  run.session.note(`paused by the runaway breaker: ${outcome.trip}`);
}
