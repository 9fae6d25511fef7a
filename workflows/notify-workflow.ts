/**
 * Delivers one notification to every configured target (config `notify`), as a child workflow the
 * goal starts and does not wait for: a receiver that is down delays nothing, and the delivery still
 * goes on with retries after the goal has ended. Its calls are local activities, so they run in the
 * process that runs this workflow, whichever it is (a foreground `run` takes no shared-queue calls).
 */
import { ActivityFailure, ApplicationFailure, proxyLocalActivities } from '@temporalio/workflow';
import type { NotifyActivities } from '../activities/notify-delivery';
import type { GoalActivities } from '../activities/workflow-activities';
import { EVENT_KINDS } from '../core/event-kinds';
import type { NotificationPayload } from '../core/notifications';
import { storeKeys } from '../core/store-keys';

/** A notification that has not arrived within this is given up, with a notice in the goal's events. */
const DELIVERY_WINDOW = '1 hour';
/** One attempt: the activity's own request timeout is shorter. */
const ATTEMPT_TIMEOUT = '20 seconds';
/** Retries back off up to this. */
const MAX_RETRY_INTERVAL = '5 minutes';

const { deliverNotification } = proxyLocalActivities<NotifyActivities>({
  startToCloseTimeout: ATTEMPT_TIMEOUT,
  scheduleToCloseTimeout: DELIVERY_WINDOW,
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: MAX_RETRY_INTERVAL },
});
const { recordEvent } = proxyLocalActivities<GoalActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});

/** Input of the notification workflow: the payload, and how many targets the goal's start saw. */
export interface GoalNotificationInput {
  sessionId: string;
  /** The same for every retry and target: `<workflow id>:<execution>:<actions>:<status>`. */
  deliveryId: string;
  targets: number;
  payload: NotificationPayload;
}

/** Sends the notification to each target; a target that never took it becomes a notice of the goal. */
export async function goalNotificationWorkflow(input: GoalNotificationInput): Promise<number> {
  const sends = Array.from({ length: input.targets }, (_, index) =>
    deliverNotification({ index, deliveryId: `${input.deliveryId}/${index}`, payload: input.payload }),
  );
  const results = await Promise.allSettled(sends);
  let delivered = 0;
  for (const [index, result] of results.entries()) {
    if (result.status === 'fulfilled') {
      if (result.value.delivered) delivered += 1;
      continue;
    }
    const text = `the ${input.payload.status} notification to notify target ${index + 1} was not delivered: ${reasonOf(result.reason)}`;
    await recordEvent({
      sessionId: input.sessionId,
      kind: EVENT_KINDS.notice,
      data: { text },
      key: storeKeys.notificationUndeliveredEvent(input.deliveryId, index),
    }).catch(() => undefined);
  }
  return delivered;
}

function reasonOf(err: unknown): string {
  let cause: unknown = err;
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  return String(cause);
}
