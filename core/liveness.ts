/**
 * Whether a running goal is really moving, from what Temporal and the store say about it: a worker
 * that stopped polling, an activity that missed its heartbeat, a workflow task that no worker of
 * this build can replay, or simply no finished step for a long while. Pure: the CLI gathers the facts.
 */
import { LIVENESS_POLL_GAP_MS, TEMPORAL_LONG_POLL_MS } from './limits';

/** What the CLI read about a running goal. */
export interface LivenessFacts {
  now: number;
  /** The goal's status in its state (running, paused, waiting_approval, limit_reached, …). */
  status: string;
  /** The goal's task queue. */
  taskQueue: string;
  /** When a worker last polled the task queue (ms), or null when none is known; undefined: unknown. */
  lastPollMs: number | null | undefined;
  /** Temporal's pending activities of the run. */
  activities: Array<{
    activityType: string;
    attempt: number;
    lastFailure: string | null;
    state?: 'scheduled' | 'started' | 'cancel_requested';
    lastAliveMs?: number | null;
  }>;
  /** Why the last workflow task failed (when none completed since), or null. */
  workflowTaskFailure: string | null;
  /** When the stall clock started: the last finished step, or the run's start when later (stallClockStart). */
  lastStepMs: number | null;
  /** How long without a finished step counts as stalled. */
  stallAfterMs: number;
}

/** What `status`, `list` and `watch` say about a running goal beyond its status. */
export interface Liveness {
  /** No worker polls the goal's queue, or its running activity missed its heartbeat: since when (ISO). */
  waitingForWorkerSince: string | null;
  /** The first line of a determinism error: the goal is stuck on an incompatible worker build. */
  stuck: string | null;
  /** No step finished for stallAfterMs: since when (ISO), and what the goal waits on. */
  stalled: { since: string; waitingOn: string } | null;
}

/** Temporal's and the TypeScript SDK's words for a replay that does not match the history. */
const DETERMINISM_ERROR = /TMPRL1100|nondetermin|non-determin/i;

/** Temporal's words for an attempt that stopped heartbeating. */
const HEARTBEAT_TIMEOUT = /heartbeat/i;

/** The state shown for a goal whose worker build cannot replay its history. */
export const STUCK_TEXT = 'stuck: incompatible worker build';

/** Whether a workflow task failure is a determinism error. */
export function isDeterminismError(message: string | null | undefined): boolean {
  return message !== null && message !== undefined && DETERMINISM_ERROR.test(message);
}

/** The first non-empty line of a text. */
export function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((line) => line.trim())
      .find((line) => line !== '') ?? ''
  );
}

/** What the facts say about a running goal. */
export function livenessOf(facts: LivenessFacts): Liveness {
  const stuck = isDeterminismError(facts.workflowTaskFailure)
    ? firstLine(facts.workflowTaskFailure ?? '')
    : null;
  const since = workerGoneSince(facts);
  const waitingForWorkerSince = since === null ? null : new Date(since).toISOString();
  const quietSince = facts.lastStepMs;
  const stalled =
    quietSince !== null && facts.now - quietSince >= facts.stallAfterMs
      ? { since: new Date(quietSince).toISOString(), waitingOn: waitingOn(facts, since !== null, stuck) }
      : null;
  return { waitingForWorkerSince, stuck, stalled };
}

/**
 * Since when no worker serves the goal (ms), or null while one does: nobody has had a poll open on
 * its queue for LIVENESS_POLL_GAP_MS, or the activity it waits on timed out on its heartbeat and nobody took it again.
 */
function workerGoneSince(facts: LivenessFacts): number | null {
  if (facts.lastPollMs === null) return facts.lastStepMs ?? facts.now;
  if (
    facts.lastPollMs !== undefined &&
    facts.now - facts.lastPollMs >= TEMPORAL_LONG_POLL_MS + LIVENESS_POLL_GAP_MS
  )
    return facts.lastPollMs;
  const abandoned = facts.activities.find(
    (activity) => activity.state === 'scheduled' && HEARTBEAT_TIMEOUT.test(activity.lastFailure ?? ''),
  );
  if (abandoned) return abandoned.lastAliveMs ?? facts.lastStepMs ?? facts.now;
  return null;
}

/** What a stalled goal waits on, in words. */
function waitingOn(facts: LivenessFacts, noWorker: boolean, stuck: string | null): string {
  if (stuck) return `a worker of a compatible build (${stuck})`;
  if (noWorker) return `no worker is polling task queue ${facts.taskQueue}`;
  if (facts.status === 'waiting_approval') return 'approval (goalrun approve / deny)';
  if (facts.status === 'paused') return 'the goal is paused (/unpause)';
  if (facts.status === 'limit_reached') return 'the goal is at a limit (/limits)';
  const retrying = facts.activities.find((activity) => activity.attempt > 1 && activity.lastFailure);
  if (retrying) {
    return `${retrying.activityType} retrying (attempt ${retrying.attempt}), last error: ${firstLine(retrying.lastFailure ?? '')}`;
  }
  const model = facts.activities.find((activity) => activity.activityType === 'modelStep');
  if (model) return 'waiting for the model';
  const other = facts.activities[0];
  if (other) return `${other.activityType} to finish`;
  return 'the workflow to run its next step';
}

/**
 * When the stall clock of a running goal started (ms): its last finished step, or the start of the
 * current run when that is later, as when a resumed execution has not finished a step yet (the
 * previous execution's last step says nothing about this one; issue 26 item 6). Null when neither is known.
 * The workflow's own watch (workflows/stall-watch.ts) counts the same way: from its run's start.
 */
export function stallClockStart(lastStepMs: number | null, runStartedMs: number | null): number | null {
  if (lastStepMs === null) return runStartedMs;
  if (runStartedMs === null) return lastStepMs;
  return Math.max(lastStepMs, runStartedMs);
}

/** The status reason of a goal the workflow marks stalled: no step finished since `sinceMs`. */
export function stalledReason(sinceMs: number, afterMinutes: number): string {
  return `no step finished since ${new Date(sinceMs).toISOString()} (stalled_after_minutes ${afterMinutes}); goalrun status shows what it waits on`;
}

/**
 * How long (ms) the stall watch sleeps before it looks again: until `stallAfterMs` after the last
 * finished step; 0 when that time has come.
 */
export function stallDueInMs(lastStepMs: number, stallAfterMs: number, nowMs: number): number {
  return Math.max(0, lastStepMs + stallAfterMs - nowMs);
}
