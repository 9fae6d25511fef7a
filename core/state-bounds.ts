/**
 * What continue-as-new carries, and the budget it stays within: Temporal warns at 512 KiB per payload
 * and fails at 2 MiB, so the control state must stay bounded whatever a goal is sent or does. Each
 * part has its own cap where it is written (the ledger by folding, CONTROL_STATE_BUDGET_BYTES; the task
 * list, MAX_TASK_GRAPH_BYTES; the inbox, MAX_INBOX_BYTES; the objective, MAX_OBJECTIVE_CHARS; recent
 * actions, job commands, the finish summary, the models counted apart); test/core/state-bounds.test.ts
 * builds the worst case they allow and holds it under this budget.
 */
import type { GoalDefinition, GoalState } from './goal';

/** The most the input of the next run may take, in JSON bytes (Temporal's payload warning). */
export const CONTINUE_AS_NEW_INPUT_BUDGET_BYTES = 512 * 1024;

/** What the objective field of a continued run's goal says: the objective travels once, in the state. */
export const OBJECTIVE_IN_STATE = '(carried in state.goal)';

/** The input of the next run: the state, and the goal without a second copy of the objective. */
export function continueAsNewPayload(state: GoalState): { goal: GoalDefinition; state: GoalState } {
  return { goal: { ...state.goal, objective: OBJECTIVE_IN_STATE }, state };
}
