/**
 * The rules of a goal's progress: what a tool call counts for, when an iteration ends, and when the
 * goal must stop. Pure, so they run in workflow code and in unit tests alike.
 */
import type { GoalLimits, GoalState, GoalStatus } from './goal';
import { noteAction } from './goal';
import { plural } from './text';
import { WORKFLOW_HANDLED_TOOL_NAMES } from './tool-names';

/** Tools whose calls change nothing in the workspace, so they never count as progress. */
// Spec: an iteration with no tool call besides task-list updates made no progress. These are the
// tools the workflow handles itself: todo-write, its retired aliases and finish.
const NON_PROGRESS_TOOLS = new Set(WORKFLOW_HANDLED_TOOL_NAMES);

/** The workspace changes remembered for the continuation message. */
const CHANGES_KEPT = 20;

/** Records one tool call's outcome: progress, changes for the continuation message, last tool. */
export function recordToolOutcome(
  state: GoalState,
  outcome: { toolName: string; summary: string; ok: boolean; changedWorkspace: boolean },
): GoalState {
  const progress = !NON_PROGRESS_TOOLS.has(outcome.toolName);
  const changes =
    outcome.changedWorkspace && outcome.ok
      ? [...state.changes, outcome.summary].slice(-CHANGES_KEPT)
      : state.changes;
  return noteAction(
    { ...state, lastTool: outcome.summary, iterationProgress: state.iterationProgress || progress, changes },
    `step ${state.steps} · ${outcome.summary}${outcome.ok ? '' : ' (error)'}`,
  );
}

/**
 * Ends the current iteration (the model answered without a tool call). Returns the state for the
 * next iteration; an iteration that changed nothing adds to the no-progress counter.
 */
export function endIteration(state: GoalState): GoalState {
  return {
    ...state,
    noProgress: state.iterationProgress ? 0 : state.noProgress + 1,
    iteration: state.iteration + 1,
    iterationProgress: false,
    planNudged: false,
    changes: [],
  };
}

/** Which limit stopped a goal: these are the ones `/limits` (or `resume --max-…`) can raise. */
export type LimitKind = 'steps' | 'iterations' | 'minutes';

/** Why a goal must stop. A limit leaves the goal waiting to be raised; no progress blocks it. */
export interface StopDecision {
  status: GoalStatus;
  reason: string;
  /** Set for limit_reached: which limit was hit. */
  limit?: LimitKind;
}

/** The CLI flag that raises each limit, for messages that say how to go on. */
export const LIMIT_FLAGS: Record<LimitKind, string> = {
  steps: '--max-steps',
  iterations: '--max-iterations',
  minutes: '--max-minutes',
};

/** Why a goal must stop now, or null to go on. `elapsedMs` counts all executions. */
export function checkStopRules(state: GoalState, elapsedMs: number): StopDecision | null {
  const { limits } = state.goal;
  if (state.noProgress >= limits.noProgressLimit) {
    return {
      status: 'blocked',
      reason: `no progress in ${plural(state.noProgress, 'consecutive iteration')} (limit ${limits.noProgressLimit})`,
    };
  }
  return checkLimits(state, limits, elapsedMs);
}

/** The first limit a goal with these counters is at or over, or null. */
export function checkLimits(
  state: Pick<GoalState, 'steps' | 'iteration'>,
  limits: GoalLimits,
  elapsedMs: number,
): StopDecision | null {
  if (state.steps >= limits.maxSteps) {
    return limitReached('steps', `step limit reached (${plural(limits.maxSteps, 'step')})`);
  }
  if (state.iteration > limits.maxIterations) {
    return limitReached(
      'iterations',
      `iteration limit reached (${plural(limits.maxIterations, 'iteration')})`,
    );
  }
  if (elapsedMs >= limits.maxMinutes * 60_000) {
    return limitReached('minutes', `time limit reached (${plural(limits.maxMinutes, 'minute')})`);
  }
  return null;
}

function limitReached(limit: LimitKind, reason: string): StopDecision {
  return { status: 'limit_reached', reason, limit };
}
