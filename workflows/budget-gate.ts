/**
 * The goal's money and token cap in the workflow (issue 18; the arithmetic is core/spend-cap.ts):
 * before each model call the loop reserves the call's worst case and, when spent plus reservation
 * would pass a cap, the goal waits in `budget_reached` instead, scheduling nothing, until a
 * `/limits max_cost_usd=…` (or `max_tokens=…`) raise lets the same step go on, or the wait ends
 * the goal as budget_reached. Only runs of the command queue (PATCH.commandQueue) take this path.
 */

import { EVENT_KINDS } from '../core/event-kinds';
import type { BudgetEventData } from '../core/event-log';
import type { GoalState } from '../core/goal';
import type { ModelCard } from '../core/model-card';
import {
  budgetView,
  type CapStop,
  capStop,
  hasCap,
  reservationFor,
  type SpendAmount,
  spentOf,
} from '../core/spend-cap';
import { plural } from '../core/text';
import { LIMIT_WAIT_MS } from './boundary';
import { currentPressure } from './compaction-host';
import { endGoal } from './goal-ending';
import type { GoalRun } from './goal-run-port';

/** What the next model call would reserve, and whether a cap stops it. */
export interface BudgetCheck {
  reservation: SpendAmount;
  stop: CapStop | null;
}

/**
 * The check before the next model call of the goal, or null for a goal without a cap. The call is
 * priced on `card`: the goal model's unless given (a summarizer call passes the summarizer's).
 */
export function checkNextCall(
  state: GoalState,
  estimatedInputTokens = currentPressure(state),
  card: ModelCard | null = state.compaction?.card ?? null,
): BudgetCheck | null {
  const caps = state.goal.limits;
  if (!hasCap(caps)) return null;
  const reservation = reservationFor(card, estimatedInputTokens);
  return { reservation, stop: capStop(spentOf(state), reservation, caps) };
}

/**
 * Whether the goal's caps leave room for a call of this input on `card` (the summarizer asks before
 * it runs, on its own card; absent: the goal model's).
 */
export function budgetAllows(
  state: GoalState,
  estimatedInputTokens: number,
  card: ModelCard | null = state.compaction?.card ?? null,
): boolean {
  return checkNextCall(state, estimatedInputTokens, card)?.stop == null;
}

/** Holds the call's worst case against the caps while it runs (shown as `reserved`). */
export function reserve(run: GoalRun, reservation: SpendAmount | null): void {
  run.state = { ...run.state, budgetReserved: reservation };
}

/** How the wait at the cap reaches the command queue. */
export interface BudgetWaitHooks {
  /** Waits until `ready` or the timeout, carrying out requests meanwhile; false on timeout. */
  waitUntil(ready: () => boolean, timeoutMs: number): Promise<boolean>;
  /** A /clear came: the loop ends this session instead. */
  clearRequested(): boolean;
}

/**
 * Waits at the cap: status budget_reached, the clock stopped, a `budget` event; true when a raise
 * (or a /clear) lets the loop go on, false when the wait ran out and the goal ended as budget_reached.
 */
export async function waitAtBudget(run: GoalRun, stop: CapStop, hooks: BudgetWaitHooks): Promise<boolean> {
  const id = run.state.goal.sessionId;
  const flag = stop.cap === 'cost' ? '--max-cost-usd' : '--max-tokens';
  const reason = `${stop.reason}; raise it with: goalrun limits ${id} ${flag} N`;
  run.session.setStatus('budget_reached', reason);
  run.session.note(`${stop.reason}; waiting for goalrun limits ${id} ${flag} N (or /limits)`);
  run.session.stopClock();
  run.timeLimit.disarm();
  reserve(run, null);
  run.publish();
  await run.saveState(true, budgetEvent(run.state, 'cap', stop, reason));
  const waitMs =
    run.state.goal.budgetWaitMinutes !== undefined
      ? run.state.goal.budgetWaitMinutes * 60_000
      : LIMIT_WAIT_MS;
  const raised = await hooks.waitUntil(
    () => hooks.clearRequested() || checkNextCall(run.state)?.stop == null,
    waitMs,
  );
  if (!raised) {
    // The workflow ends here, so `goalrun limits` no longer reaches it: a resume with the flag does.
    const ended = `${stop.reason}; no raise came in ${plural(Math.round(waitMs / 60_000), 'minute')} (budget_wait_minutes): go on with goalrun resume ${id} ${flag} N`;
    await endGoal(run, 'budget_reached', ended);
    return false;
  }
  if (hooks.clearRequested()) return true;
  run.session.setStatus('running');
  run.session.note('budget raised; going on');
  run.session.startClock();
  run.timeLimit.arm(run.session.remainingMs());
  run.publish();
  await run.saveState(true, budgetEvent(run.state, 'raised', null, null));
  return true;
}

function budgetEvent(
  state: GoalState,
  at: 'cap' | 'raised',
  stop: CapStop | null,
  reason: string | null,
): { kind: string; data: BudgetEventData } {
  // At the cap, `reserved` is what the refused call would have reserved.
  const view = budgetView(spentOf(state), stop?.reservation ?? null, state.goal.limits);
  return { kind: EVENT_KINDS.budget, data: { ...view, at, cap: stop?.cap ?? null, reason } };
}
