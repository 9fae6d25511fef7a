/**
 * Finds a goal's current snapshot: live from the workflow's `state` query while it runs, else from
 * the checkpoint on the session row in the store, else (a goal no worker has picked up yet, which
 * has no row) from what Temporal knows: the input it was started with.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { cardWarning, userCardDirs } from '../activities/models/card-names';
import { ConfigError } from '../core/errors';
import type { GoalState, GoalStatus } from '../core/goal';
import { type GoalSnapshot, snapshotOf } from '../core/goal-snapshot';
import type { Liveness } from '../core/liveness';
import { EMPTY_USAGE } from '../core/usage';
import { STATE_QUERY, workflowIdOf } from '../core/workflow-names';
import type { SessionRow } from '../store/types';
import type { CliContext } from './context';
import { goalLiveness } from './goal-liveness';
import { readerOf, type TemporalSource, type WorkflowSummary } from './temporal-reader';
import { type FirstEvents, firstEvents } from './worker-presence';

/** How long a `state` query may take before the CLI falls back to the store (no worker is polling). */
export const QUERY_TIMEOUT_MS = 5_000;

/** The status of a started goal that no worker has picked up yet (it is not a goal status: nothing ran). */
export const WAITING_FOR_WORKER = 'waiting_for_worker';

/** A goal's status as the CLI shows it. */
export type DisplayStatus = GoalStatus | typeof WAITING_FOR_WORKER;

/** An activity that failed and waits for its next attempt: why a running goal is not moving. */
export interface RetryingActivity {
  activity: string;
  attempt: number;
  lastFailure: string;
}

/** A snapshot plus what only the store or Temporal's pending-activity list knows. */
export type StatusView = Omit<GoalSnapshot, 'status'> & {
  status: DisplayStatus;
  keptProgress?: string | null;
  retrying?: RetryingActivity | null;
  /** Said once about the model, e.g. that it has no model card. */
  modelNote?: string | null;
  /** The task queue of a goal waiting for a worker. */
  taskQueue?: string;
  /** The Worker Deployment build its run is on, when versioned workers run it. */
  build?: string;
  /** Whether a worker serves the running goal, whether it is stuck or stalled (goal-liveness.ts). */
  liveness?: Liveness;
  /** Where the counters come from: the running workflow, or the store when the workflow did not answer. */
  shown?: 'live' | 'last recorded state';
};

/** Temporal's closed states mapped to goal statuses, for goals that ended without a checkpoint. */
export const CLOSED_STATUS: Record<string, GoalStatus> = {
  CANCELLED: 'cancelled',
  TERMINATED: 'failed',
  TIMED_OUT: 'failed',
  FAILED: 'failed',
  COMPLETED: 'completed',
};

/** How a status reads in text: `waiting for a worker`, else the status itself. */
export function statusText(status: DisplayStatus): string {
  return status === WAITING_FOR_WORKER ? 'waiting for a worker' : status;
}

/** The snapshot of a goal state saved on a session row, or null before its first checkpoint. */
export function snapshotFromRow(row: SessionRow): StatusView | null {
  const saved = row.goalState as (Omit<GoalState, 'ledger'> & { keptProgress?: string | null }) | null;
  if (!saved?.goal) return null;
  // The name is the store's: `rename` of a goal that runs no more changes only the row.
  return {
    ...snapshotOf(saved, row.workflowId, saved.elapsedMsBefore),
    ...(row.name ? { name: row.name } : {}),
    keptProgress: saved.keptProgress ?? null,
  };
}

/** An empty view of a goal that has not run a step: its definition, no counters. */
function bareView(fields: {
  sessionId: string;
  status: DisplayStatus;
  reason: string | null;
  objective: string;
  model: string;
  workspace: string;
}): StatusView {
  return {
    ...fields,
    workflowId: workflowIdOf(fields.sessionId),
    iteration: 0,
    steps: 0,
    noProgress: 0,
    elapsedMs: 0,
    usage: EMPTY_USAGE,
    costUsd: 0,
    lastTool: null,
    finishSummary: null,
    recent: [],
    keptProgress: null,
  };
}

/** The view of a session row: its checkpoint, or the bare row before the first checkpoint. */
export function viewOfRow(row: SessionRow): StatusView {
  return (
    snapshotFromRow(row) ?? {
      ...bareView({
        sessionId: row.id,
        status: row.status,
        reason: row.reason,
        objective: row.objective,
        model: row.model,
        workspace: row.projectDir,
      }),
      workflowId: row.workflowId,
    }
  );
}

/**
 * The last recorded state of a goal whose workflow runs but does not answer (no worker, or a worker
 * that cannot replay it): its counters as saved, its clock still running since the save.
 */
export function recordedView(row: SessionRow): StatusView {
  const view = viewOfRow(row);
  return { ...view, elapsedMs: view.elapsedMs + Math.max(0, Date.now() - row.updatedAt.getTime()) };
}

/** The view of a goal known only to Temporal, from the input it was started with. */
export function viewOfStart(sessionId: string, first: FirstEvents, status: DisplayStatus): StatusView {
  // A run continued as new carries its goal in its state (core/state-bounds.ts).
  const goal = first.input?.state?.goal ?? first.input?.goal;
  return {
    ...bareView({
      sessionId,
      status,
      reason: status === WAITING_FOR_WORKER ? waitingReason(first) : null,
      objective: goal?.objective ?? '(unknown)',
      model: goal?.model ?? '(unknown)',
      workspace: goal?.workspace ?? '(unknown)',
    }),
    elapsedMs: first.startedAt ? Math.max(0, Date.now() - first.startedAt.getTime()) : 0,
    ...(first.taskQueue ? { taskQueue: first.taskQueue } : {}),
  };
}

/** Why a goal waits for a worker: none picked it up yet, or the last one failed to run its first task. */
function waitingReason(first: FirstEvents): string {
  return first.workflowTaskFailure
    ? `a worker could not start it: ${first.workflowTaskFailure}`
    : 'no worker has picked the goal up yet';
}

/** Runs a query, giving up after QUERY_TIMEOUT_MS (null): a goal without a worker never answers. */
export async function queryWithTimeout<T>(run: () => Promise<T>): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), QUERY_TIMEOUT_MS);
  });
  try {
    return await Promise.race([run().catch(() => null), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Asks a running workflow (through a handle the caller holds) for its state, giving up after a few seconds. */
export function queryState(handle: WorkflowHandle): Promise<GoalSnapshot | null> {
  return queryWithTimeout(() => handle.query<GoalSnapshot>(STATE_QUERY.name));
}

/** The first pending activity that has failed at least once, from Temporal's description. */
function retryingActivity(summary: WorkflowSummary): RetryingActivity | null {
  const pending = summary.pendingActivities.find(
    (activity) => activity.attempt > 1 && activity.lastFailure !== null,
  );
  if (!pending) return null;
  return { activity: pending.activityType, attempt: pending.attempt, lastFailure: pending.lastFailure ?? '' };
}

/** Temporal's description of a session's workflow, or null when it does not know it (or cannot say). */
async function describeGoal(source: TemporalSource, sessionId: string): Promise<WorkflowSummary | null> {
  try {
    return await readerOf(source).describe(workflowIdOf(sessionId));
  } catch {
    return null;
  }
}

/** Temporal's status of a session's workflow (RUNNING, COMPLETED, …), or null when it does not know it. */
export async function workflowStatus(source: TemporalSource, sessionId: string): Promise<string | null> {
  return (await describeGoal(source, sessionId))?.status ?? null;
}

/**
 * Whether a running goal is still waiting for its first worker; its first events when it is.
 * Null for a goal that is not running, has been picked up, or Temporal does not know.
 */
export async function waitingForWorker(
  source: TemporalSource,
  sessionId: string,
): Promise<FirstEvents | null> {
  if ((await workflowStatus(source, sessionId)) !== 'RUNNING') return null;
  const first = await firstEvents(source, workflowIdOf(sessionId)).catch(() => null);
  return first && !first.pickedUp ? first : null;
}

/**
 * The view of a running goal no worker has picked up (`status` and `list` agree on it). A resumed
 * goal has a row from its earlier execution; its new one is what is waiting.
 */
export function waitingView(sessionId: string, first: FirstEvents, row: SessionRow | null): StatusView {
  const waiting = viewOfStart(sessionId, first, WAITING_FOR_WORKER);
  return row
    ? { ...viewOfRow(row), status: WAITING_FOR_WORKER, reason: waiting.reason, taskQueue: waiting.taskQueue }
    : waiting;
}

/** Loads the snapshot of a goal by its (resolved) session id. Throws ConfigError when unknown. */
export async function loadStatus(context: CliContext, sessionId: string): Promise<StatusView> {
  const reader = await context.temporalReader();
  const summary = reader ? await describeGoal(reader, sessionId) : null;
  const status = summary?.status ?? null;
  const store = await context.sessionStore();
  const row = await store.findSession(sessionId);
  const workflowId = workflowIdOf(sessionId);
  if (reader && summary && status === 'RUNNING') {
    const first = await firstEvents(reader, workflowId).catch(() => null);
    if (first && !first.pickedUp) return waitingView(sessionId, first, row);
    const live = await queryWithTimeout(() => reader.query(workflowId, STATE_QUERY));
    // The description read just before says which activity, if any, is failing and retried.
    const view: StatusView | null = live
      ? {
          ...live,
          retrying: retryingActivity(summary),
          shown: 'live',
          ...(summary.build ? { build: summary.build } : {}),
        }
      : row
        ? { ...recordedView(row), retrying: retryingActivity(summary), shown: 'last recorded state' }
        : first
          ? { ...viewOfStart(sessionId, first, 'running'), retrying: retryingActivity(summary) }
          : null;
    if (view) {
      const liveness = await goalLiveness(reader, {
        sessionId,
        status: view.status,
        summary,
        store,
        runStartedMs: first?.startedAt?.getTime() ?? null,
        stalledAfterMinutes: context.settings.config.stalled_after_minutes,
      }).catch(() => undefined);
      return liveness ? { ...view, liveness } : view;
    }
  }
  if (row) return { ...viewOfRow(row), ...(summary?.build ? { build: summary.build } : {}) };
  if (reader && status) {
    const first = await firstEvents(reader, workflowId).catch(() => null);
    if (first) return viewOfStart(sessionId, first, CLOSED_STATUS[status] ?? 'running');
  }
  throw new ConfigError(`no goal with session or workflow id "${sessionId}"`);
}

/** What to say once about a goal's model: that it has no model card, or null. */
export function modelNoteOf(model: string, where: { home?: string } = {}): string | null {
  try {
    return cardWarning(model, undefined, userCardDirs(where.home)) ?? null;
  } catch {
    return null;
  }
}
