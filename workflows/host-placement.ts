/**
 * Where a goal's own calls go (issue 16: a foreground run runs only its own goal). A `run` or `resume`
 * that hosts a worker gives the goal its own queue (`goal.hostQueue`): model calls, summarizer calls and
 * the tools that would run on the workflow's queue go there, so that process runs this goal's steps and
 * nobody else's, and no other process runs them. A call nobody takes there within HOST_START_TIMEOUT_MS
 * means that process is gone: the goal gives up the host and makes the call again on the store's shared
 * queue, where `goalrun worker` processes pick it up without anyone doing anything.
 */
import { ActivityFailure, TimeoutFailure } from '@temporalio/workflow';
import type { GoalRun } from './goal-run-port';

/** How long a call waits on the host's queue before the host counts as gone. */
export const HOST_START_TIMEOUT_MS = 30_000;

/** Where one call is sent: the host's queue (with a deadline to be taken), or the default queue. */
export interface Placement {
  taskQueue?: string;
  scheduleToStartTimeoutMs?: number;
}

/** Runs a call on the goal's host when it has one, else (or once the host is gone) where it would run anyway. */
export async function onGoalHost<T>(run: GoalRun, call: (placement: Placement) => Promise<T>): Promise<T> {
  const host = run.state.goal.hostQueue;
  if (!host) return call({});
  try {
    return await call({ taskQueue: host, scheduleToStartTimeoutMs: HOST_START_TIMEOUT_MS });
  } catch (err) {
    if (!nobodyTookIt(err)) throw err;
    run.releaseHost(
      host,
      `nobody took a call on ${host} within ${HOST_START_TIMEOUT_MS / 1000} s: the process that ran this goal in the foreground is gone`,
    );
    return call({});
  }
}

/** Whether an activity failed because no worker started it in time. */
function nobodyTookIt(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof TimeoutFailure &&
    err.cause.timeoutType === 'SCHEDULE_TO_START'
  );
}
