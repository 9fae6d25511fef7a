/**
 * Notifications to a person (config `notify`, issue 28 §2): when a goal enters a status that needs
 * someone, stalls, or ends, it starts a notification child workflow and does not wait for it, so a
 * receiver that is down delays nothing. One notification per status entered; a stalled goal at
 * most once per STALLED_RENOTIFY_MS.
 */
import { isCancellation, ParentClosePolicy, startChild } from '@temporalio/workflow';
import { breakdownTotal } from '../core/cost';
import { NOTIFY_STATUSES, notifyStatus } from '../core/extensions/notify-status';
import { notificationPayload, shouldNotify } from '../core/notifications';
import { storeKeys } from '../core/store-keys';
import type { GoalRun } from './goal-run-port';
import { goalNotificationWorkflow } from './notify-workflow';
import { PATCH } from './patches';

/** The status each run last told about, and when it last told of a stall (workflow time). */
const told = new WeakMap<GoalRun, { status?: string; stalledAtMs?: number }>();

/** After a checkpoint: starts the notification of a status entered that someone should hear of. */
export async function notifyPeople(run: GoalRun): Promise<void> {
  const targets = run.state.goal.notifyTargets ?? 0;
  if (!run.features[PATCH.notifyTargets] || targets <= 0) return;
  const { goal, status } = run.state;
  const memory = told.get(run) ?? {};
  told.set(run, memory);
  const nowMs = Date.now(); // the workflow's clock: replay-safe
  const tell =
    NOTIFY_STATUSES.includes(status) &&
    shouldNotify({ previousStatus: memory.status, status, lastStalledNoticeMs: memory.stalledAtMs, nowMs });
  memory.status = status;
  if (!tell) return;
  if (status === 'stalled') memory.stalledAtMs = nowMs;
  const facts = {
    sessionId: goal.sessionId,
    status,
    reason: run.state.reason,
    steps: run.state.steps,
    iteration: run.state.iteration,
    approval: run.state.approval,
  };
  const payload = notificationPayload(
    notifyStatus({
      sessionId: goal.sessionId,
      workflowId: run.workflowId,
      status,
      reason: run.state.reason,
      objective: goal.objective,
      costUsd: breakdownTotal(run.state.breakdown ?? {}).costUsd,
      steps: run.state.steps,
      iterations: run.state.iteration,
      approval: run.state.approval,
    }),
    facts,
  );
  const deliveryId = storeKeys.notificationDelivery(run.workflowId, run.execution, run.state.actions, status);
  try {
    await startChild(goalNotificationWorkflow, {
      workflowId: deliveryId,
      args: [{ sessionId: goal.sessionId, deliveryId, targets, payload }],
      // The notification outlives the goal: its retries go on after the goal has ended.
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
  } catch (err) {
    if (isCancellation(err)) throw err;
    // A notification that cannot start (one with this id ran already) is a note, never the goal's failure.
    run.session.note(`the ${status} notification was not sent: ${(err as Error).message}`);
  }
}
