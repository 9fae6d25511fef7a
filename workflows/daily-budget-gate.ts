/**
 * The store-wide daily budget in the workflow (issue 18 item 4; the ledger is store/daily-budget.ts).
 * Before each of the goal's own model calls it reserves the call's worst case in the store, where one
 * transaction under the budget row's lock decides it for every worker at once; after the call it
 * settles the reservation with what the step cost. (Summarizer calls hold their own reservation,
 * asked every time, in goal-compaction-host.ts.) When today's cap refuses it, the goal waits in
 * `budget_reached` (reason "daily budget") and asks again every DAILY_BUDGET_POLL_MS: a poll, not a
 * signal, because a raise (`goalrun budget set`) is a store write that knows no workflow, and the
 * same poll also notices the next UTC day's window, so one timer covers both ways out.
 * In runs of PATCH.waitsEnd the wait ends (issue 24 item 5): each poll prices the call again (a
 * /compact during the wait can make it fit), a call whose worst case alone is over the cap ends the
 * goal as blocked at once, the wait ends the goal as budget_reached after budget_wait_minutes, and
 * when Temporal suggests continue-as-new the loop continues as new and the wait goes on in the next
 * run (state.dailyWaitSinceMs carries its start). Runs of PATCH.dailyBudget only. Without a daily
 * cap a step costs one local activity at most every NO_DAILY_CAP_RECHECK_MS, and none to settle.
 */
import { EVENT_KINDS } from '../core/event-kinds';
import type { BudgetEventData } from '../core/event-log';
import { budgetView, reservationFor, spentOf, usd } from '../core/spend-cap';
import {
  type DailyRefusal,
  dailyWaitEndReason,
  dailyWaitReason,
  impossibleDailyCall,
  waitLeftMs,
} from '../core/waits';
import { LIMIT_WAIT_MS } from './boundary';
import { currentPressure } from './compaction-host';
import { endGoal } from './goal-ending';
import type { GoalRun } from './goal-run-port';
import { PATCH } from './patches';

/** How often a goal waiting at the daily cap asks the store again (a raise or the next day). */
export const DAILY_BUDGET_POLL_MS = 60_000;
/**
 * While the store has no daily cap, how long a goal goes on without asking again: a step then costs
 * no extra history event, and a cap set meanwhile applies within this long (and at each new run).
 */
export const NO_DAILY_CAP_RECHECK_MS = 5 * 60_000;

/** Until when (workflow time) a run skips the daily check, after the store said it has no cap. */
const noCapUntil = new WeakMap<GoalRun, number>();

/**
 * The store said it has no daily cap (at the open of a PATCH.openInOneCall goal): the next
 * NO_DAILY_CAP_RECHECK_MS of steps go without asking, as after a reservation that found none.
 */
export function noDailyCapSeen(run: GoalRun): void {
  noCapUntil.set(run, Date.now() + NO_DAILY_CAP_RECHECK_MS);
}

/** How the wait at the daily cap reaches the command queue. */
export interface DailyWaitHooks {
  /** Waits until `ready` or the timeout, carrying out requests meanwhile; false on timeout. */
  waitUntil(ready: () => boolean, timeoutMs: number): Promise<boolean>;
  /** A /clear came: the loop ends this session instead. */
  clearRequested(): boolean;
  /** Temporal suggests continue-as-new (a long history): the wait hands over to the next run. */
  continueAsNewSuggested?(): boolean;
}

/**
 * What the loop does next: run the step holding `reservationId` (null: no daily cap), go round, or
 * stop (the wait ended the goal).
 */
export type DailyGate =
  | { kind: 'go'; reservationId: string | null; spentBeforeUsd: number }
  | { kind: 'again' }
  | { kind: 'ended' };

/**
 * Reserves the next call against the daily budget. When refused, waits in budget_reached until a
 * poll succeeds; that reservation is then given back and the loop goes round (`again`), so a pause
 * or a /clear that came during the wait is seen at the step boundary before any call.
 */
export async function reserveDaily(run: GoalRun, hooks: DailyWaitHooks): Promise<DailyGate> {
  const sessionId = run.state.goal.sessionId;
  // Priced at every ask: a /compact (or a /model) during a wait changes what the next call may cost.
  const reservationNow = () =>
    reservationFor(run.state.compaction?.card ?? null, currentPressure(run.state)).costUsd;
  const ask = (reservationUsd: number) =>
    run.store.reserveDailyBudget({ sessionId, model: run.state.goal.model, reservationUsd });
  const ends = run.features[PATCH.waitsEnd];
  const waiting = ends && typeof run.state.dailyWaitSinceMs === 'number';
  const skipUntil = noCapUntil.get(run);
  if (!waiting && skipUntil !== undefined && Date.now() < skipUntil) {
    return { kind: 'go', reservationId: null, spentBeforeUsd: spentOf(run.state).costUsd };
  }
  const reservationUsd = reservationNow();
  const first = await ask(reservationUsd);
  if (first.kind === 'none') noDailyCapSeen(run);
  if (first.kind !== 'refused') {
    const reservationId = first.kind === 'reserved' ? first.id : null;
    if (waiting) {
      // A wait carried over continue-as-new is over: given back, and the loop goes round as below.
      if (reservationId !== null) await run.store.settleDailyBudget({ id: reservationId, costUsd: 0 });
      await leaveDailyWait(run);
      return { kind: 'again' };
    }
    return { kind: 'go', reservationId, spentBeforeUsd: spentOf(run.state).costUsd };
  }
  if (ends) return waitThatEnds(run, hooks, first, reservationUsd, reservationNow, ask);
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
    const next = await ask(reservationUsd);
    if (next.kind === 'refused') continue;
    if (next.kind === 'reserved') await run.store.settleDailyBudget({ id: next.id, costUsd: 0 });
    break;
  }
  await leaveDailyWait(run);
  return { kind: 'again' };
}

/** The store's answer to a reservation. */
type DailyAnswer = Awaited<ReturnType<GoalRun['store']['reserveDailyBudget']>>;

/**
 * The wait at the daily cap of PATCH.waitsEnd runs: refused at once when the call can never fit,
 * bounded by budget_wait_minutes (counted from the wait's start, across continue-as-new), and
 * handed over to the next run when Temporal suggests continue-as-new.
 */
async function waitThatEnds(
  run: GoalRun,
  hooks: DailyWaitHooks,
  refused: DailyRefusal,
  reservationUsd: number,
  reservationNow: () => number,
  ask: (reservationUsd: number) => Promise<DailyAnswer>,
): Promise<DailyGate> {
  const impossible = impossibleDailyCall(reservationUsd, refused.capUsd);
  if (impossible) return endDailyWait(run, 'blocked', impossible);
  if (typeof run.state.dailyWaitSinceMs === 'number') {
    // Carried over continue-as-new: the status and the cap event are saved; only the clock restarted.
    run.session.stopClock();
    run.timeLimit.disarm();
  } else {
    const reason = dailyWaitReason(refused, reservationUsd);
    run.session.setStatus('budget_reached', reason);
    run.session.note(reason);
    run.session.stopClock();
    run.timeLimit.disarm();
    run.state = { ...run.state, dailyWaitSinceMs: Date.now() };
    run.publish();
    await run.saveState(true, dailyBudgetEvent(run, 'cap', reason));
  }
  const waitMs =
    run.state.goal.budgetWaitMinutes !== undefined
      ? run.state.goal.budgetWaitMinutes * 60_000
      : LIMIT_WAIT_MS;
  for (;;) {
    const left = waitLeftMs(run.state.dailyWaitSinceMs ?? Date.now(), waitMs, Date.now());
    if (left <= 0) {
      return endDailyWait(run, 'budget_reached', dailyWaitEndReason(waitMs, run.state.goal.sessionId));
    }
    // The loop continues as new at its next turn; state.dailyWaitSinceMs keeps the wait going there.
    if (hooks.continueAsNewSuggested?.()) return { kind: 'again' };
    await hooks.waitUntil(() => hooks.clearRequested(), Math.min(DAILY_BUDGET_POLL_MS, left));
    if (hooks.clearRequested()) {
      run.state = { ...run.state, dailyWaitSinceMs: null };
      return { kind: 'again' };
    }
    const priced = reservationNow();
    const next = await ask(priced);
    if (next.kind === 'refused') {
      const never = impossibleDailyCall(priced, next.capUsd);
      if (never) return endDailyWait(run, 'blocked', never);
      continue;
    }
    if (next.kind === 'reserved') await run.store.settleDailyBudget({ id: next.id, costUsd: 0 });
    break;
  }
  await leaveDailyWait(run);
  return { kind: 'again' };
}

/** The wait at the daily cap ends the goal (blocked: the call can never fit; budget_reached: no raise came). */
async function endDailyWait(
  run: GoalRun,
  status: 'blocked' | 'budget_reached',
  reason: string,
): Promise<DailyGate> {
  run.state = { ...run.state, dailyWaitSinceMs: null };
  await endGoal(run, status, reason);
  return { kind: 'ended' };
}

/**
 * A poll's reservation fitted: that reservation was given back and the loop goes round, so a pause
 * or a /clear that came during the wait is seen at the step boundary before any call.
 */
async function leaveDailyWait(run: GoalRun): Promise<void> {
  if (run.features[PATCH.waitsEnd]) run.state = { ...run.state, dailyWaitSinceMs: null };
  run.session.setStatus('running');
  run.session.note('daily budget allows the next call; going on');
  run.session.startClock();
  run.timeLimit.arm(run.session.remainingMs());
  run.publish();
  await run.saveState(true, dailyBudgetEvent(run, 'raised', null));
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
