/**
 * Sends one notification to one target of the worker's config `notify` (core/notifications.ts says
 * what). The target is named by its index: its URL, secret and token stay in this process and never
 * travel through Temporal. A receiver that refuses the request (a 4xx other than 408 and 429) is not
 * asked again; one that is down or slow is, by the workflow's retry policy.
 */
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import {
  desktopMessage,
  type NotificationPayload,
  type NotifyTarget,
  notificationRequest,
  SIGNATURE_HEADER,
} from '../core/notifications';

/** One request gets this long to be answered; a slow receiver is tried again later. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** `notify-send` gets this long. */
const DESKTOP_TIMEOUT_MS = 5_000;
/** The failure type of a receiver that refused a notification: retrying would not change its answer. */
export const NOTIFY_REFUSED = 'NotificationRefused';
/** The failure type of a receiver that did not answer, or answered with an error that may pass. */
export const NOTIFY_UNDELIVERED = 'NotificationUndelivered';

/** Input of `deliverNotification`. */
export interface DeliverNotificationInput {
  /** The target's index in config `notify`. */
  index: number;
  /** The same on every retry: receivers may drop a repeat by it. */
  deliveryId: string;
  payload: NotificationPayload;
}

/** What a delivery did. */
export interface DeliverNotificationResult {
  delivered: boolean;
  /** Why nothing was sent (a target this worker does not have, no display). */
  skipped?: string;
}

/** The notification activity over the worker's configured targets. */
export function createNotifyActivities(targets: readonly NotifyTarget[]) {
  return {
    /** Sends one notification to one target; throws a typed failure when it did not arrive. */
    async deliverNotification(input: DeliverNotificationInput): Promise<DeliverNotificationResult> {
      const target = targets[input.index];
      if (!target)
        return { delivered: false, skipped: `this worker's config has no notify target ${input.index + 1}` };
      if (target.type === 'desktop') return showOnDesktop(input.payload);
      const request = notificationRequest(target, input.payload, input.deliveryId);
      if (!request) return { delivered: false, skipped: 'nothing to send' };
      const headers = { ...request.headers };
      if (target.type === 'webhook' && target.secret)
        headers[SIGNATURE_HEADER] = signature(target.secret, request.body);
      let response: Response;
      try {
        response = await fetch(request.url, {
          method: 'POST',
          headers,
          body: request.body,
          redirect: 'manual',
          signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
        });
      } catch (err) {
        throw ApplicationFailure.retryable(
          `${hostOf(request.url)} did not answer: ${(err as Error).message}`,
          NOTIFY_UNDELIVERED,
        );
      }
      await response.body?.cancel().catch(() => undefined);
      if (response.ok) return { delivered: true };
      const refused =
        response.status >= 400 && response.status < 500 && ![408, 429].includes(response.status);
      const message = `${hostOf(request.url)} answered HTTP ${response.status}`;
      if (refused) throw ApplicationFailure.nonRetryable(message, NOTIFY_REFUSED);
      throw ApplicationFailure.retryable(message, NOTIFY_UNDELIVERED);
    },
  };
}

/** The activities `createNotifyActivities` makes. */
export type NotifyActivities = ReturnType<typeof createNotifyActivities>;

/** `sha256=<hex>` of the body under the secret: what a receiver recomputes to trust the body. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The host of a URL, never its path or query (which may carry a token). */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the receiver';
  }
}

async function showOnDesktop(payload: NotificationPayload): Promise<DeliverNotificationResult> {
  if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY)
    return { delivered: false, skipped: 'no display on this worker (DISPLAY and WAYLAND_DISPLAY unset)' };
  const { title, text } = desktopMessage(payload);
  await new Promise<void>((resolve, reject) => {
    execFile('notify-send', [title, text], { timeout: DESKTOP_TIMEOUT_MS }, (err) => {
      if (!err) return resolve();
      reject(ApplicationFailure.nonRetryable(`notify-send failed: ${err.message}`, NOTIFY_REFUSED));
    });
  });
  return { delivered: true };
}
