/**
 * The store-wide daily budget in the workflow (issue 18 item 4; the ledger is store/daily-budget.ts).
 * Before each model call the goal reserves the call's worst case in the store, where one transaction
 * under the budget row's lock decides it for every worker at once; after the call it settles the
 * reservation with what the step cost. When today's cap refuses it, the goal waits in
 * `budget_reached` (reason "daily budget") and asks again every DAILY_BUDGET_POLL_MS: a poll, not a
 * signal, because a raise (`goalrun budget set`) is a store write that knows no workflow, and the
 * same poll also notices the next UTC day's window, so one timer covers both ways out.
 * Runs of PATCH.dailyBudget only. Cost without a daily cap: one local activity (one history event,
 * one indexed SELECT) at most every NO_DAILY_CAP_RECHECK_MS, and none to settle.
 */
import { EVENT_KINDS } from '../core/event-kinds';
import type { BudgetEventData } from '../core/event-log';
import { budgetView, reservationFor, spentOf, usd } from '../core/spend-cap';
import { currentPressure } from './compaction-host';
import type { GoalRun } from './goal-run-port';

/** How often a goal waiting at the daily cap asks the store again (a raise or the next day). */
export const DAILY_BUDGET_POLL_MS = 60_000;
/**
 * While the store has no daily cap, how long a goal goes on without asking again: a step then costs
 * no extra history event, and a cap set meanwhile applies within this long (and at each new run).
 */
export const NO_DAILY_CAP_RECHECK_MS = 5 * 60_000;

/** Until when (workflow time) a run skips the daily check, after the store said it has no cap. */
const noCapUntil = new WeakMap<GoalRun, number>();

/** How the wait at the daily cap reaches the command queue. */
export interface DailyWaitHooks {
  /** Waits until `ready` or the timeout, carrying out requests meanwhile; false on timeout. */
  waitUntil(ready: () => boolean, timeoutMs: number): Promise<boolean>;
  /** A /clear came: the loop ends this session instead. */
  clearRequested(): boolean;
}

/** What the loop does next: run the step holding `reservationId` (null: no daily cap), or go round. */
export type DailyGate =
  | { kind: 'go'; reservationId: string | null; spentBeforeUsd: number }
  | { kind: 'again' };

/**
 * Reserves the next call against the daily budget. When refused, waits in budget_reached until a
 * poll succeeds; that reservation is then given back and the loop goes round (`again`), so a pause
 * or a /clear that came during the wait is seen at the step boundary before any call.
 */
export async function reserveDaily(run: GoalRun, hooks: DailyWaitHooks): Promise<DailyGate> {
  const sessionId = run.state.goal.sessionId;
  const reservationUsd = reservationFor(
    run.state.compaction?.card ?? null,
    currentPressure(run.state),
  ).costUsd;
  const ask = () => run.store.reserveDailyBudget({ sessionId, model: run.state.goal.model, reservationUsd });
  const skipUntil = noCapUntil.get(run);
  if (skipUntil !== undefined && Date.now() < skipUntil) {
    return { kind: 'go', reservationId: null, spentBeforeUsd: spentOf(run.state).costUsd };
  }
  const first = await ask();
  if (first.kind === 'none') noCapUntil.set(run, Date.now() + NO_DAILY_CAP_RECHECK_MS);
  if (first.kind !== 'refused') {
    const reservationId = first.kind === 'reserved' ? first.id : null;
    return { kind: 'go', reservationId, spentBeforeUsd: spentOf(run.state).costUsd };
  }
  const reason =
    `daily budget reached: ${usd(first.countedUsd)} of ${usd(first.capUsd)} used today, and the next model ` +
    `call may cost up to ${usd(reservationUsd)}; waiting until ${first.nextWindowAt} or goalrun budget set --daily-usd N`;
  run.session.setStatus('budget_reached', reason);
  run.session.note(reason);
  run.session.stopClock();
  run.timeLimit.disarm();
  run.publish();
  await run.saveState(true, dailyBudgetEvent(run, 'cap', reason));
  for (;;) {
    await hooks.waitUntil(() => hooks.clearRequested(), DAILY_BUDGET_POLL_MS);
    if (hooks.clearRequested()) return { kind: 'again' };
    const next = await ask();
    if (next.kind === 'refused') continue;
    if (next.kind === 'reserved') await run.store.settleDailyBudget({ id: next.id, costUsd: 0 });
    break;
  }
  run.session.setStatus('running');
  run.session.note('daily budget allows the next call; going on');
  run.session.startClock();
  run.timeLimit.arm(run.session.remainingMs());
  run.publish();
  await run.saveState(true, dailyBudgetEvent(run, 'raised', null));
  return { kind: 'again' };
}

/** Settles the step's reservation with what the goal spent during it; runs even when the step was cancelled. */
export async function settleDailyStep(run: GoalRun, gate: DailyGate): Promise<void> {
  if (gate.kind !== 'go' || gate.reservationId === null) return;
  const costUsd = Math.max(0, spentOf(run.state).costUsd - gate.spentBeforeUsd);
  await run.store.settleDailyBudget({ id: gate.reservationId, costUsd });
}

function dailyBudgetEvent(
  run: GoalRun,
  at: 'cap' | 'raised',
  reason: string | null,
): { kind: string; data: BudgetEventData } {
  const view = budgetView(spentOf(run.state), null, run.state.goal.limits);
  return { kind: EVENT_KINDS.budget, data: { ...view, at, cap: 'cost', reason } };
}
