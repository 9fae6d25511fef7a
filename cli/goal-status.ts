/**
 * Finds a goal's current snapshot: live from the workflow's `state` query while it runs, else from
 * the checkpoint on the session row in the store.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { ConfigError } from '../core/errors';
import { type GoalSnapshot, type GoalState, snapshotOf } from '../core/goal';
import { EMPTY_USAGE } from '../core/usage';
import type { SessionRow } from '../store/types';
import { sessionIdOf, stateQuery, workflowIdOf } from '../workflows/definitions';
import type { CliContext } from './context';

/** How long a `state` query may take before the CLI falls back to the store (no worker is polling). */
const QUERY_TIMEOUT_MS = 5_000;

/** An activity that failed and waits for its next attempt: why a running goal is not moving. */
export interface RetryingActivity {
  activity: string;
  attempt: number;
  lastFailure: string;
}

/** A snapshot plus what only the store or Temporal's pending-activity list knows. */
export type StatusView = GoalSnapshot & { keptProgress?: string | null; retrying?: RetryingActivity | null };

/** The snapshot of a goal state saved on a session row, or null before its first checkpoint. */
export function snapshotFromRow(row: SessionRow): StatusView | null {
  const saved = row.goalState as (Omit<GoalState, 'ledger'> & { keptProgress?: string | null }) | null;
  if (!saved?.goal) return null;
  return {
    ...snapshotOf(saved, row.workflowId, saved.elapsedMsBefore),
    keptProgress: saved.keptProgress ?? null,
  };
}

/** The view of a session row: its checkpoint, or the bare row before the first checkpoint. */
export function viewOfRow(row: SessionRow): StatusView {
  return (
    snapshotFromRow(row) ?? {
      sessionId: row.id,
      workflowId: row.workflowId,
      status: row.status,
      reason: row.reason,
      objective: row.objective,
      model: row.model,
      workspace: row.projectDir,
      iteration: 0,
      steps: 0,
      noProgress: 0,
      elapsedMs: 0,
      usage: EMPTY_USAGE,
      lastTool: null,
      finishSummary: null,
      recent: [],
      keptProgress: null,
    }
  );
}

/** Asks a running workflow for its state, giving up after a few seconds. */
export async function queryState(handle: WorkflowHandle): Promise<GoalSnapshot | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), QUERY_TIMEOUT_MS);
  });
  try {
    return await Promise.race([handle.query(stateQuery).catch(() => null), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The first pending activity that has failed at least once, from Temporal's description. */
async function retryingActivity(handle: WorkflowHandle): Promise<RetryingActivity | null> {
  try {
    const { raw } = await handle.describe();
    const pending = (raw.pendingActivities ?? []).find(
      (activity) => (activity.attempt ?? 0) > 1 && activity.lastFailure,
    );
    if (!pending) return null;
    return {
      activity: pending.activityType?.name ?? 'activity',
      attempt: pending.attempt ?? 0,
      lastFailure: pending.lastFailure?.message ?? '',
    };
  } catch {
    return null;
  }
}

/** Whether the workflow of a session is running, or null when Temporal does not know it. */
export async function workflowStatus(client: Client, sessionId: string): Promise<string | null> {
  try {
    const description = await client.workflow.getHandle(workflowIdOf(sessionId)).describe();
    return description.status.name;
  } catch {
    return null;
  }
}

/** Loads the snapshot of a goal by session id or workflow id. Throws ConfigError when unknown. */
export async function loadStatus(context: CliContext, id: string): Promise<StatusView> {
  const sessionId = sessionIdOf(id.trim());
  const client = await context.temporalIfRunning();
  if (client && (await workflowStatus(client, sessionId)) === 'RUNNING') {
    const handle = client.workflow.getHandle(workflowIdOf(sessionId));
    const live = await queryState(handle);
    if (live) return { ...live, retrying: await retryingActivity(handle) };
  }
  const store = await context.sessionStore();
  const row = await store.findSession(id.trim());
  if (!row) throw new ConfigError(`no goal with session or workflow id "${id}"`);
  return viewOfRow(row);
}
