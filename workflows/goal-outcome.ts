/**
 * How a goal's ending shows in Temporal (issue 26 item 1): a goal that ended blocked or failed fails
 * its workflow, so the Web UI's header reads Failed instead of a green Completed. The failure is
 * non-retryable, its message is the goal's reason and its first detail the final snapshot, the same
 * object a completed goal returns (cli/goal-result.ts reads it from either).
 */
import { ApplicationFailure } from '@temporalio/workflow';
import type { GoalSnapshot } from '../core/goal-snapshot';
import { GOAL_BLOCKED_TYPE, GOAL_FAILED_TYPE } from '../core/workflow-names';

/** The failure that ends the workflow of a goal that failed or was blocked; null for any other ending. */
export function endingFailure(snapshot: GoalSnapshot): ApplicationFailure | null {
  if (snapshot.status !== 'blocked' && snapshot.status !== 'failed') return null;
  return goalFailure(snapshot.status === 'blocked' ? GOAL_BLOCKED_TYPE : GOAL_FAILED_TYPE, snapshot);
}

/** A non-retryable failure of this type: the reason as its message, the final snapshot as its detail. */
export function goalFailure(type: string, snapshot: GoalSnapshot): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message: snapshot.reason ?? `goal ${snapshot.status}`,
    nonRetryable: true,
    details: [snapshot],
  });
}
