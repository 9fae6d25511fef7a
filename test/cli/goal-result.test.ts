/**
 * The snapshot a goal's workflow failure carries (issue 26 item 1): a blocked or failed goal fails its
 * workflow with GoalBlocked or GoalFailed and its final snapshot as the first detail.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, RetryState } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { snapshotOfFailure } from '../../cli/goal-result';

const snapshot = { sessionId: 'sess-1', workflowId: 'goalrun-sess-1', status: 'blocked', reason: 'stuck' };

/** The error `handle.result()` throws for a workflow that failed with this cause. */
const failedWith = (cause: Error) =>
  new WorkflowFailedError('Workflow execution failed', cause, RetryState.NON_RETRYABLE_FAILURE);

describe('snapshotOfFailure', () => {
  it('reads the final snapshot of a GoalBlocked and a GoalFailed failure', () => {
    for (const type of ['GoalBlocked', 'GoalFailed']) {
      const cause = ApplicationFailure.create({
        type,
        message: 'stuck',
        nonRetryable: true,
        details: [snapshot],
      });
      expect(snapshotOfFailure(failedWith(cause))).toEqual(snapshot);
    }
  });

  it('finds none in a GoalFailed of an older build, which has no details', () => {
    const cause = ApplicationFailure.create({
      type: 'GoalFailed',
      message: 'provider down',
      nonRetryable: true,
    });
    expect(snapshotOfFailure(failedWith(cause))).toBeNull();
  });

  it('finds none in other failures', () => {
    const other = ApplicationFailure.create({ type: 'Bug', message: 'x', details: [snapshot] });
    expect(snapshotOfFailure(failedWith(other))).toBeNull();
    expect(snapshotOfFailure(new Error('connection refused'))).toBeNull();
    expect(snapshotOfFailure(failedWith(new Error('terminated')))).toBeNull();
  });
});
