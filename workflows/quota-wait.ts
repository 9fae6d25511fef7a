/**
 * Quota-aware waiting in the workflow (issue 18; the classification is core/quota.ts): a model call
 * refused because the account is out of quota until a known time waits on a durable timer until then,
 * status `waiting_quota` with the time shown, and the step runs again by itself; with no known time
 * the goal pauses with the reason, and unpause goes on. No retry is spent either way. In runs of
 * PATCH.waitsEnd a quota that comes back later than quota_wait_minutes (a day by default) ends the
 * goal as blocked at once instead of a timer nobody meant to wait for (issue 24 item 6).
 */
import { FailureType } from '../core/errors';
import { plural } from '../core/text';
import { DEFAULT_QUOTA_WAIT_MINUTES, quotaTooFar } from '../core/waits';
import { failureDetail, innermostMessage } from './failures';
import type { StepControl } from './goal-control';
import type { GoalRun } from './goal-run-port';
import { PATCH } from './patches';

/** The reset time a QuotaExhausted failure carries (null: the provider gave none). */
export function quotaResetOf(err: unknown): number | null {
  const detail = failureDetail(err, FailureType.QuotaExhausted) as { resetAtMs?: unknown } | undefined;
  return typeof detail?.resetAtMs === 'number' ? detail.resetAtMs : null;
}

/**
 * Waits out an exhausted quota (or pauses for one with no reset time); the caller takes the step
 * again. Returns how the goal ends when the quota comes back too late to wait for (PATCH.waitsEnd).
 */
export async function waitForQuota(
  run: GoalRun,
  control: StepControl,
  err: unknown,
  stepNumber: number,
): Promise<{ status: 'blocked'; reason: string } | null> {
  const message = innermostMessage(err);
  const resetAtMs = quotaResetOf(err);
  if (resetAtMs === null) {
    const reason = `provider quota exhausted and no reset time given (${message}); unpause when it is back`;
    run.state = { ...run.state, paused: true, pauseReason: reason };
    run.session.note(`step ${stepNumber} · ${reason}`);
    return null;
  }
  if (run.features[PATCH.waitsEnd]) {
    const maxWaitMs = (run.state.goal.quotaWaitMinutes ?? DEFAULT_QUOTA_WAIT_MINUTES) * 60_000;
    const tooFar = quotaTooFar(resetAtMs, Date.now(), maxWaitMs, message);
    if (tooFar) {
      run.session.note(`step ${stepNumber} · ${tooFar}`);
      return { status: 'blocked', reason: tooFar };
    }
  }
  const until = new Date(resetAtMs).toISOString();
  const reason = `provider quota exhausted until ${until} (${message})`;
  run.session.setStatus('waiting_quota', reason);
  run.session.note(`step ${stepNumber} · ${reason}; waiting`);
  run.session.stopClock();
  run.timeLimit.disarm();
  run.publish();
  await run.saveState(true, { kind: 'quota-wait', data: { until, reason } });
  const waitMs = Math.max(0, resetAtMs - Date.now());
  // Requests go on being carried out; only the timer ends the wait.
  await control.waitInStep(() => false, waitMs);
  run.session.setStatus('running');
  run.session.note(`quota back after ${plural(Math.round(waitMs / 1000), 'second')}; going on`);
  run.session.startClock();
  run.timeLimit.arm(run.session.remainingMs());
  run.publish();
  await run.saveState(true, { kind: 'quota-resumed', data: { until } });
  return null;
}
