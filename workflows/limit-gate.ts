/**
 * A goal of the command queue at a step, iteration or time limit: it waits in `limit_reached`, its
 * clock stopped and its jobs killed, for `goalrun limits` (or /limits) to raise the limit, for up to
 * LIMIT_WAIT_MS, before it ends as limit_reached for good. (Goals started before the command queue
 * wait as legacy/boundary.ts says.)
 */
import type { StopDecision } from '../core/goal-rules';
import { LIMIT_WAIT_MS } from './boundary';
import { endGoal } from './goal-ending';
import type { GoalRun } from './goal-run-port';

/** How the wait at a limit reaches the command queue. */
export interface LimitWaitHooks {
  /** Waits until `ready` or the timeout, carrying out requests meanwhile; false on timeout. */
  waitUntil(ready: () => boolean, timeoutMs: number): Promise<boolean>;
  /** A /clear came: the loop ends this session instead. */
  clearRequested(): boolean;
}

/** Waits at the limit; true when a raise (or a /clear) lets the loop go on, false when the goal ended. */
export async function waitAtLimit(run: GoalRun, stop: StopDecision, hooks: LimitWaitHooks): Promise<boolean> {
  run.session.setStatus('limit_reached', stop.reason);
  run.session.note(
    `limit reached: ${stop.reason}; waiting for goalrun limits ${run.state.goal.sessionId} (or /limits)`,
  );
  run.session.stopClock();
  run.timeLimit.disarm();
  await run.killJobs();
  run.publish();
  await run.saveState(true, { kind: 'limit-reached', data: { reason: stop.reason, limit: stop.limit } });
  const raised = await hooks.waitUntil(
    () => hooks.clearRequested() || run.session.stopDecision()?.status !== 'limit_reached',
    LIMIT_WAIT_MS,
  );
  if (!raised) {
    await endGoal(run, 'limit_reached', stop.reason);
    return false;
  }
  if (hooks.clearRequested()) return true;
  run.session.setStatus('running');
  run.session.note('limits raised; going on');
  run.session.startClock();
  run.timeLimit.arm(run.session.remainingMs());
  run.publish();
  await run.saveState(true, { kind: 'limits-raised', data: { limits: run.state.goal.limits } });
  return true;
}
