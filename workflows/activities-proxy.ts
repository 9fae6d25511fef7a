/** The goal workflow's view of its activities, with the options each kind of work needs. */
import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { createCompactionActivities } from '../activities/compaction-activities';
import type { JobHostActivities } from '../activities/types';
import type { GoalActivities } from '../activities/workflow-activities';
import { NON_RETRYABLE_FAILURES } from '../core/errors';
import {
  MODEL_HEARTBEAT_TIMEOUT_MS,
  MODEL_STEP_MAX_ATTEMPTS,
  MODEL_STEP_TIMEOUT_MS,
  STORE_CALL_WINDOW_MS,
  TOOL_HEARTBEAT_TIMEOUT_MS,
  TOOL_STEP_MAX_ATTEMPTS,
  TOOL_STEP_TIMEOUT_MS,
} from '../core/limits';
import { type Placement, placedOptions } from './host-placement';

/** Every activity a goal workflow calls. */
type AllActivities = GoalActivities & ReturnType<typeof createCompactionActivities> & JobHostActivities;

/** How long a job operation waits for the process that holds the job before calling it lost. */
export const JOB_HOST_WAIT = '60s';

/**
 * Store reads and writes of the workflow itself: local activities, because they take milliseconds,
 * need no routing, and a local activity costs one history event where a normal one costs three.
 * Retried for STORE_CALL_WINDOW_MS; from patch store-outage-wait on, the run calls again after an
 * outage until the database is back (store-wait.ts).
 */
export const storeActivities = proxyLocalActivities<AllActivities>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: STORE_CALL_WINDOW_MS,
  localRetryThreshold: '10s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    nonRetryableErrorTypes: NON_RETRYABLE_FAILURES,
  },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/** Model calls: heartbeat while the stream makes progress, so a dead worker is noticed quickly; typed provider errors. */
export function modelActivities(
  summary: string,
  maximumAttempts = MODEL_STEP_MAX_ATTEMPTS,
  placement: Placement = {},
) {
  return proxyActivities<AllActivities>({
    startToCloseTimeout: MODEL_STEP_TIMEOUT_MS,
    heartbeatTimeout: MODEL_HEARTBEAT_TIMEOUT_MS,
    ...placedOptions(placement, {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '60s',
      maximumAttempts,
      nonRetryableErrorTypes: NON_RETRYABLE_FAILURES,
    }),
    // Wait for the activity to acknowledge, so a cancelled stream is closed before cleanup runs.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    summary,
  });
}

/** Tool calls: on the workspace's task queue; cancellation waits until the process group is gone. */
export function toolActivities(summary: string, taskQueue: string | undefined, placement: Placement = {}) {
  return proxyActivities<AllActivities>({
    startToCloseTimeout: TOOL_STEP_TIMEOUT_MS,
    heartbeatTimeout: TOOL_HEARTBEAT_TIMEOUT_MS,
    // A tools queue (--tools-queue) is never a foreground host: its calls keep their own options.
    ...placedOptions(taskQueue ? {} : placement, {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '30s',
      maximumAttempts: TOOL_STEP_MAX_ATTEMPTS,
    }),
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    ...(taskQueue ? { taskQueue } : {}),
    summary,
  });
}

/**
 * A tool host's call that runs in the workflow task itself, as a local activity: only for a goal whose
 * tools run on the workflow's own queue, where every worker that runs the workflow runs its tools too.
 * Retried as a tool call; a local activity has no heartbeat timeout, so a worker that dies in it is
 * noticed by the workflow task's timeout instead, and the call runs again there.
 */
export const toolLocalActivities = proxyLocalActivities<AllActivities>({
  startToCloseTimeout: TOOL_STEP_TIMEOUT_MS,
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    maximumAttempts: TOOL_STEP_MAX_ATTEMPTS,
  },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/**
 * The goal's checks at a finish (issue 27 §1): on the tool host, bounded by the checks' own timeouts
 * plus a margin; one retry after an infrastructure fault, after which the checks count as failed.
 */
export function verifyActivities(
  timeoutMs: number,
  taskQueue: string | undefined,
  placement: Placement = {},
) {
  return proxyActivities<AllActivities>({
    startToCloseTimeout: timeoutMs + VERIFY_MARGIN_MS,
    heartbeatTimeout: TOOL_HEARTBEAT_TIMEOUT_MS,
    // As a tool call: a tools queue keeps its own options, a foreground host its takeover rules.
    ...placedOptions(taskQueue ? {} : placement, { initialInterval: '1s', maximumAttempts: 2 }),
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    ...(taskQueue ? { taskQueue } : {}),
    summary: 'verify: run the checks',
  });
}

/** What a verify activity gets beyond its checks' timeouts (spooling, starting the sandbox). */
const VERIFY_MARGIN_MS = 60_000;

/**
 * Operations on a background job, sent to the process that holds it. A process that is gone never
 * picks the task up: after JOB_HOST_WAIT the job is marked lost instead of waiting forever.
 */
export function jobActivities(summary: string, processQueue: string) {
  return proxyActivities<AllActivities>({
    scheduleToStartTimeout: JOB_HOST_WAIT,
    startToCloseTimeout: TOOL_STEP_TIMEOUT_MS,
    heartbeatTimeout: TOOL_HEARTBEAT_TIMEOUT_MS,
    retry: { maximumAttempts: 2 },
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    taskQueue: processQueue,
    summary,
  });
}

/**
 * The summarizer: one attempt, because each failure counts against the auto-compact failure
 * budget, which decides when to try again (spec S-BUDGET).
 */
export function summarizerActivities(placement: Placement = {}) {
  return proxyActivities<AllActivities>({
    startToCloseTimeout: MODEL_STEP_TIMEOUT_MS,
    heartbeatTimeout: MODEL_HEARTBEAT_TIMEOUT_MS,
    ...placedOptions(placement, { maximumAttempts: 1 }),
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    summary: 'summarize (compaction)',
  });
}
