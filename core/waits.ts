/**
 * Waits that end (issue 24 items 5 and 6): the words and the arithmetic of the goal's waits at the
 * store-wide daily budget and for a provider's quota, so that neither can hold a goal forever. A call
 * whose worst case alone is over the daily cap can never fit and is refused at once; a daily wait
 * ends after budget_wait_minutes; a quota that comes back later than quota_wait_minutes ends the
 * goal instead of a wait longer than anyone meant. Pure, so the workflow and the unit tests share it.
 */
import { usd } from './spend-cap';
import { plural } from './text';

/**
 * Float sums of per-call costs drift by far less than this: a call whose worst case lands exactly
 * on the daily cap fits (the same tolerance as core/spend-cap.ts and store/daily-budget.ts).
 */
const USD_TOLERANCE = 1e-9;

/** Default `quota_wait_minutes`: a quota that comes back later than this ends the goal as blocked. */
export const DEFAULT_QUOTA_WAIT_MINUTES = 24 * 60;

/** How to raise the store-wide daily budget, for a reason or an end message. */
export const DAILY_RAISE_ADVICE = 'raise it with: goalrun budget set --daily-usd N';

/**
 * Why a call can never run under the daily cap (its worst case alone is over the cap), or null
 * when it could fit once today's spend allows.
 */
export function impossibleDailyCall(reservationUsd: number, capUsd: number): string | null {
  if (reservationUsd <= capUsd + USD_TOLERANCE) return null;
  return `a single call needs ${usd(reservationUsd)}, the daily budget is ${usd(capUsd)}; ${DAILY_RAISE_ADVICE}, then goalrun resume`;
}

/** What the store said when it refused a reservation at the daily cap. */
export interface DailyRefusal {
  capUsd: number;
  countedUsd: number;
  nextWindowAt: string;
}

/** The status reason of a goal waiting at the daily cap. */
export function dailyWaitReason(refused: DailyRefusal, reservationUsd: number): string {
  return (
    `daily budget reached: ${usd(refused.countedUsd)} of ${usd(refused.capUsd)} used today, and the next ` +
    `model call may cost up to ${usd(reservationUsd)}; waiting until ${refused.nextWindowAt}, or ${DAILY_RAISE_ADVICE}`
  );
}

/** The reason a goal ends with after waiting at the daily cap for its whole budget wait. */
export function dailyWaitEndReason(waitMs: number, sessionId: string): string {
  return (
    `daily budget reached, and no raise came in ${minutesText(waitMs)} (budget_wait_minutes); ` +
    `${DAILY_RAISE_ADVICE}, then goalrun resume ${sessionId}`
  );
}

/** Workflow time (ms) left of a wait that began at `sinceMs` and may last `waitMs`; 0 once over. */
export function waitLeftMs(sinceMs: number, waitMs: number, nowMs: number): number {
  return Math.max(0, sinceMs + waitMs - nowMs);
}

/**
 * Why a quota wait is refused (the provider's reset is further away than the goal may wait), or
 * null when the goal may wait for it. `detail`: the provider's words.
 */
export function quotaTooFar(
  resetAtMs: number,
  nowMs: number,
  maxWaitMs: number,
  detail: string,
): string | null {
  if (resetAtMs - nowMs <= maxWaitMs) return null;
  return (
    `provider quota exhausted until ${new Date(resetAtMs).toISOString()} (${detail}), later than the longest quota wait ` +
    `(${minutesText(maxWaitMs)}, config quota_wait_minutes); resume with goalrun resume once the quota is back`
  );
}

/** `90 minutes`, `1 minute`. */
function minutesText(ms: number): string {
  return plural(Math.round(ms / 60_000), 'minute');
}
