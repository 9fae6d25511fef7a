/** The messages goalrun itself writes into a goal's transcript, and the kept-progress summary. */
import type { GoalState, GoalStatus } from './goal';
import { plural } from './text';

/** The user message that starts the next iteration of an unfinished goal. */
export function continuationMessage(state: GoalState, previousChanges: string[]): string {
  const changed =
    previousChanges.length > 0
      ? `In the last turn you did:\n${previousChanges.map((change) => `- ${change}`).join('\n')}`
      : 'The last turn changed nothing in the workspace.';
  return [
    `[goalrun] The goal is not finished yet (iteration ${state.iteration} of at most ${state.goal.limits.maxIterations}).`,
    `Objective: ${state.goal.objective}`,
    changed,
    'Continue working on the objective, or call `finish` with status "complete" (or "blocked" with the reason) if there is nothing left you can do.',
  ].join('\n\n');
}

/** The kept-progress summary saved when a goal is interrupted (spec S-SAVE). */
export function keptProgressSummary(state: GoalState, elapsedMs: number): string {
  const lines = [
    `Interrupted after ${plural(state.steps, 'step')} in ${plural(state.iteration, 'iteration')} (${Math.round(elapsedMs / 1000)} s).`,
    `Objective: ${state.goal.objective}`,
  ];
  // The call that was running is what the interruption cut short; name it, not the last one that finished.
  if (state.runningTool) lines.push(`Interrupted call: ${state.runningTool}`);
  if (state.lastTool && state.lastTool !== state.runningTool) lines.push(`Last tool call: ${state.lastTool}`);
  const recent = state.recent.slice(-8).map((action) => `- ${action.text}`);
  if (recent.length > 0) lines.push(`Recent actions:\n${recent.join('\n')}`);
  return lines.join('\n');
}

/** The message a resumed execution adds before its first step. */
export function resumeMessage(state: GoalState, keptProgress: string | null): string {
  return [
    `[goalrun] This goal was ${state.status === 'cancelled' ? 'cancelled' : 'stopped'} and has now been resumed (execution ${state.executions}).`,
    keptProgress ? `Progress kept from before:\n${keptProgress}` : null,
    'Tool calls that were interrupted did not finish; check their effects before relying on them.',
    'Continue working on the objective, or call `finish` when it is done.',
  ]
    .filter(Boolean)
    .join('\n\n');
}

/**
 * What the sender of a steering message is told when the goal ended before delivering it (it was
 * sent during the last step), and how to give the goal that instruction anyway.
 */
export function undeliveredSteeringText(status: GoalStatus, sessionId: string): string {
  return `the goal ended (${status}) before its next step; to give it this instruction: goalrun resume ${sessionId} --message "…"`;
}
