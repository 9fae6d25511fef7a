/**
 * The workflow a goal schedule's Temporal Schedule starts at each firing (issue 28 §3): it makes the
 * goal's session row, named `<schedule>-<time of the firing>`, then runs the goal as a child workflow
 * and waits for it. So the firing runs as long as its goal does, and the Schedule's overlap policy
 * (skip, buffer-one) holds the next firing while a goal runs; cancelling it cancels the goal.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  ParentClosePolicy,
  proxyActivities,
  startChild,
  TerminatedFailure,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { ScheduleActivities } from '../activities/schedule-activities';
import { NON_RETRYABLE_FAILURES } from '../core/errors';
import {
  type ScheduledGoalInput,
  type ScheduledGoalMemo,
  type ScheduledGoalResult,
  scheduledGoalName,
} from '../core/goal-schedule';
import type { GoalSnapshot } from '../core/goal-snapshot';
import { STORE_CALL_WINDOW_MS } from '../core/limits';
import { sessionIdWith } from '../core/session-ids';
import { GOAL_WORKFLOW_TYPE, workflowIdOf } from '../core/workflow-names';
import { goalStartMetadata } from './goal-start-metadata';
import type { goalWorkflow } from './goal-workflow';

/** The time a Schedule meant a firing for (a trigger's is when it was triggered); Temporal sets it. */
const ScheduledStartTimeKey = defineSearchAttributeKey(
  'TemporalScheduledStartTime',
  SearchAttributeType.DATETIME,
);

/** The session row: retried through a store outage for as long as the goal's own store calls are. */
const { createScheduledSession, cancelScheduledSession } = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: STORE_CALL_WINDOW_MS,
  retry: { maximumInterval: '30s', nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
});

/** Starts the firing's goal and waits for it; returns its name, session and how it ended. */
export async function scheduledGoalWorkflow(input: ScheduledGoalInput): Promise<ScheduledGoalResult> {
  const info = workflowInfo();
  const firedAt = info.typedSearchAttributes.get(ScheduledStartTimeKey) ?? info.startTime;
  // The start time has milliseconds: two schedules of one project firing at the same minute get two ids.
  const sessionId = sessionIdWith(input.idHash, info.startTime);
  const goal = { ...input.goal, sessionId };
  const workflowId = workflowIdOf(sessionId);
  // Not cut short by a cancel: the row would be left behind, made or not, with no goal to end it.
  const { name } = await CancellationScope.nonCancellable(() =>
    createScheduledSession({
      sessionId,
      name: scheduledGoalName(input.schedule, firedAt),
      projectDir: input.projectDir,
      projectHash: input.projectHash,
      objective: goal.objective,
      model: goal.model,
      workflowId,
    }),
  );
  upsertMemo({ goal: name, sessionId } satisfies ScheduledGoalMemo);
  if (CancellationScope.current().consideredCancelled) {
    // Cancelled (`schedule delete`) while the row was made: it says so, rather than `running` for ever.
    await CancellationScope.nonCancellable(() =>
      cancelScheduledSession({ sessionId, reason: 'its schedule was deleted before the goal started' }),
    );
    throw new CancelledFailure('the firing was cancelled before its goal started');
  }
  const child = await startChild<typeof goalWorkflow>(GOAL_WORKFLOW_TYPE, {
    workflowId,
    args: [{ goal }],
    ...goalStartMetadata(goal),
    // A cancelled firing (`schedule delete`) waits until its goal has saved its checkpoint.
    cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    // A firing that ends some other way (terminated) asks its goal to stop rather than killing it.
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
  });
  try {
    const snapshot = await child.result();
    return { name, sessionId, status: snapshot.status };
  } catch (err) {
    // This firing was cancelled: it ends cancelled too. A goal that ended on its own is a result.
    if (CancellationScope.current().consideredCancelled || !(err instanceof ChildWorkflowFailure)) throw err;
    return { name, sessionId, status: endedStatus(err) };
  }
}

/** The status of a goal whose workflow did not complete: from its final snapshot when it carries one. */
function endedStatus(failure: ChildWorkflowFailure): string {
  const cause = failure.cause;
  if (cause instanceof ApplicationFailure) {
    const snapshot = cause.details?.[0] as Partial<GoalSnapshot> | undefined;
    return typeof snapshot?.status === 'string' ? snapshot.status : 'failed';
  }
  if (cause instanceof CancelledFailure) return 'cancelled';
  if (cause instanceof TerminatedFailure) return 'terminated';
  return 'failed';
}
