/**
 * Where a goal's own calls go (issue 16: a foreground run runs only its own goal). A `run` or `resume`
 * that hosts a worker gives the goal its own queue (`goal.hostQueue`): model calls, summarizer calls and
 * the tools that would run on the workflow's queue go there, so that process runs this goal's steps and
 * nobody else's, and no other process runs them. When that process is gone the goal gives up the host
 * and makes the call again on the store's shared queue, where `goalrun worker` processes pick it up
 * without anyone doing anything.
 *
 * How "gone" is noticed (issue 26 item 6, PATCH.fastTakeover): a call nobody takes on the host's queue
 * within HOST_START_FAST_TIMEOUT_MS (the process died between calls), or a call the host started whose
 * heartbeats stop for HOST_HEARTBEAT_TIMEOUT_MS (it died during the call). That heartbeat timeout is not
 * retried by Temporal (which would wait out a backoff and a full start window on the dead queue): the
 * call is made once more on the host with HOST_RECHECK_TIMEOUT_MS to be taken, which a live host that
 * was only slow to heartbeat does at once (as a retry would), and a dead one does not; then the call
 * goes to the shared queue. Runs from before the patch wait HOST_START_TIMEOUT_MS per attempt and retry
 * a heartbeat timeout on the host first: 30–47 s before a store worker took over.
 */
import { ActivityFailure, type RetryPolicy, TimeoutFailure } from '@temporalio/workflow';
import type { GoalRun } from './goal-run-port';
import { PATCH } from './patches';

/** How long a call waits on the host's queue before the host counts as gone (runs before fastTakeover). */
export const HOST_START_TIMEOUT_MS = 30_000;

/**
 * The same, from PATCH.fastTakeover on. A live host has a poll open on its queue and takes a call in
 * milliseconds (the poll is the SDK core's, so a busy JavaScript thread does not delay it).
 */
export const HOST_START_FAST_TIMEOUT_MS = 5_000;

/**
 * A call the host started counts as lost once its heartbeats stop for this long (PATCH.fastTakeover).
 * The foreground worker sends heartbeats as they come, at least every HOST_HEARTBEAT_THROTTLE_MS
 * (core/limits.ts), and its model and tool calls beat every 1–2 s: a live host keeps 3 s of margin, as
 * the 15 s timeout, sent every 12 s, left before.
 */
export const HOST_HEARTBEAT_TIMEOUT_MS = 5_000;

/**
 * After a heartbeat timeout, how long the call waits on the host's queue before the host counts as
 * gone: a live host has a poll open there and takes it in milliseconds.
 */
export const HOST_RECHECK_TIMEOUT_MS = 2_000;

/** How Temporal names a heartbeat timeout in a retry policy's non-retryable types. */
export const HEARTBEAT_TIMEOUT_TYPE = 'TemporalTimeout:Heartbeat';

/** Where one call is sent: the host's queue (with its deadlines), or the default queue. */
export interface Placement {
  taskQueue?: string;
  scheduleToStartTimeoutMs?: number;
  /** A shorter heartbeat timeout than the call's own (fastTakeover). */
  heartbeatTimeoutMs?: number;
  /** A heartbeat timeout comes back to the workflow instead of being retried on the host's queue. */
  heartbeatNotRetried?: boolean;
}

/**
 * Runs a call on the goal's host when it has one, else (or once the host is gone) where it would run
 * anyway. `lost` hears of an attempt the host started and lost (its heartbeats stopped): the call is
 * made again as a new activity, so what that one was billed is counted there (paid-calls.ts).
 */
export async function onGoalHost<T>(
  run: GoalRun,
  call: (placement: Placement) => Promise<T>,
  lost?: (err: unknown) => Promise<void>,
): Promise<T> {
  const host = run.state.goal.hostQueue;
  if (!host) return call({});
  const fast = run.features[PATCH.fastTakeover];
  let startWithin = fast ? HOST_START_FAST_TIMEOUT_MS : HOST_START_TIMEOUT_MS;
  try {
    if (!fast) return await call({ taskQueue: host, scheduleToStartTimeoutMs: startWithin });
    try {
      return await call({
        taskQueue: host,
        scheduleToStartTimeoutMs: startWithin,
        heartbeatTimeoutMs: HOST_HEARTBEAT_TIMEOUT_MS,
        heartbeatNotRetried: true,
      });
    } catch (err) {
      if (timeoutOf(err) !== 'HEARTBEAT') throw err;
      await lost?.(err);
      // Dead, or alive and late with a heartbeat: a live host takes the call again at once.
      startWithin = HOST_RECHECK_TIMEOUT_MS;
      return await call({
        taskQueue: host,
        scheduleToStartTimeoutMs: startWithin,
        heartbeatTimeoutMs: HOST_HEARTBEAT_TIMEOUT_MS,
      });
    }
  } catch (err) {
    if (timeoutOf(err) !== 'SCHEDULE_TO_START') throw err;
    run.releaseHost(
      host,
      `nobody took a call on ${host} within ${startWithin / 1000} s: the process that ran this goal in the foreground is gone`,
    );
    return call({});
  }
}

/** The timeout an activity failed with, if it failed with one. */
function timeoutOf(err: unknown): string | null {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure
    ? (err.cause.timeoutType ?? null)
    : null;
}

/** The activity options of a placement: queue, start deadline, heartbeat timeout (and whether it is retried). */
export function placedOptions(
  placement: Placement,
  retry: RetryPolicy,
): { taskQueue?: string; scheduleToStartTimeout?: number; heartbeatTimeout?: number; retry: RetryPolicy } {
  return {
    ...(placement.taskQueue ? { taskQueue: placement.taskQueue } : {}),
    ...(placement.scheduleToStartTimeoutMs
      ? { scheduleToStartTimeout: placement.scheduleToStartTimeoutMs }
      : {}),
    ...(placement.heartbeatTimeoutMs ? { heartbeatTimeout: placement.heartbeatTimeoutMs } : {}),
    retry: placement.heartbeatNotRetried
      ? {
          ...retry,
          nonRetryableErrorTypes: [...(retry.nonRetryableErrorTypes ?? []), HEARTBEAT_TIMEOUT_TYPE],
        }
      : retry,
  };
}
