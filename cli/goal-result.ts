/**
 * A goal workflow's result, however it closed: a completed goal returns its final snapshot, and one
 * that ended blocked or failed fails its workflow with GoalBlocked or GoalFailed carrying the same
 * snapshot as the failure's first detail (workflows/goal-outcome.ts). Readers of a goal's result use
 * this, so a blocked goal's result is not lost in an exception.
 */
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { GoalSnapshot } from '../core/goal-snapshot';
import { GOAL_END_FAILURE_TYPES } from '../core/workflow-names';

/** The goal's final snapshot once its workflow closes; rethrows a failure that carries none. */
export async function goalResult(handle: WorkflowHandle): Promise<GoalSnapshot> {
  try {
    return (await handle.result()) as GoalSnapshot;
  } catch (err) {
    const snapshot = snapshotOfFailure(err);
    if (snapshot) return snapshot;
    throw err;
  }
}

/**
 * The final snapshot a goal's workflow failure carries (GoalBlocked, GoalFailed), or null for any
 * other failure (a GoalFailed of a build before patch goal-end-failure carries none).
 */
export function snapshotOfFailure(err: unknown): GoalSnapshot | null {
  if (!(err instanceof WorkflowFailedError)) return null;
  const cause = err.cause;
  if (!(cause instanceof ApplicationFailure) || !GOAL_END_FAILURE_TYPES.includes(cause.type ?? ''))
    return null;
  const detail = cause.details?.[0] as Partial<GoalSnapshot> | undefined;
  return detail && typeof detail.sessionId === 'string' && typeof detail.status === 'string'
    ? (detail as GoalSnapshot)
    : null;
}
