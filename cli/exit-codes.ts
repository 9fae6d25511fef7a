import type { GoalStatus } from '../core/goal';

/** Exit codes of `run`, `watch` and `resume` (a contract scripts rely on). */
export const ExitCode = {
  /** Completed, or `cleared` (the goal goes on in a fresh session). */
  completed: 0,
  failedOrBlocked: 1,
  usage: 2,
  cancelled: 3,
  limitReached: 4,
  /** Ctrl-C while following: the goal goes on without us (SIGTERM: 143; see signals.ts). */
  interrupted: 130,
} as const;

/** The exit code for a goal that ended with this status (or a display status such as waiting_for_worker). */
export function exitCodeOf(status: GoalStatus | string): number {
  switch (status) {
    case 'completed':
    // /clear ended this session in favour of a fresh one: no failure (the outcome names the new session).
    case 'cleared':
      return ExitCode.completed;
    case 'cancelled':
      return ExitCode.cancelled;
    case 'limit_reached':
    case 'budget_reached':
      return ExitCode.limitReached;
    default:
      return ExitCode.failedOrBlocked;
  }
}
