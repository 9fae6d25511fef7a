/**
 * Notifications that reach a person (config `notify`): a webhook (JSON, or a Slack-compatible
 * message), an ntfy topic, or the desktop. What each one sends is built here, pure, so the workflow
 * decides when and tests check what; the worker's activity adds the signature and sends it.
 */
import type { NotifyStatus } from './extensions/notify-status';
import { goalHeadline, type HeadlineFacts } from './goal-headline';

/** The kinds of notification target. */
export const NOTIFY_TARGET_TYPES = ['webhook', 'ntfy', 'desktop'] as const;

/** One place a goal's notifications go (an entry of config `notify`). */
export type NotifyTarget =
  | { type: 'webhook'; url: string; secret?: string; format?: 'json' | 'slack'; page_url?: string }
  | { type: 'ntfy'; url: string; token?: string; page_url?: string }
  | { type: 'desktop'; page_url?: string };

/** A goal that stays stalled, or stalls again, is told about it at most this often. */
export const STALLED_RENOTIFY_MS = 60 * 60 * 1000;

/** The header that carries a webhook body's HMAC-SHA256 signature: `sha256=<hex>`. */
export const SIGNATURE_HEADER = 'X-Goalrun-Signature';
/** The header that names one delivery, the same on every retry, so a receiver can drop a repeat. */
export const DELIVERY_HEADER = 'X-Goalrun-Delivery';

/** What a notification says: the notify hook's JSON, the one line that says what is needed, and the page. */
export interface NotificationPayload extends NotifyStatus {
  event: 'notify';
  /** `status — reason — next command`, as the Web UI's details open. */
  headline: string;
  /** The goal's page on `goalrun serve` (notify `page_url` with the goal's id), when configured. */
  page_url?: string;
}

/** The notification of a status change (without the page, which depends on the target). */
export function notificationPayload(status: NotifyStatus, facts: HeadlineFacts): NotificationPayload {
  return { event: 'notify', ...status, headline: goalHeadline(facts) };
}

/**
 * Whether a status entered now is told: each status once when entered, and a `stalled` goal at most
 * once per STALLED_RENOTIFY_MS even if it flaps between running and stalled.
 */
export function shouldNotify(input: {
  previousStatus: string | undefined;
  status: string;
  lastStalledNoticeMs: number | undefined;
  nowMs: number;
}): boolean {
  if (input.previousStatus === input.status) return false;
  if (input.status !== 'stalled' || input.lastStalledNoticeMs === undefined) return true;
  return input.nowMs - input.lastStalledNoticeMs >= STALLED_RENOTIFY_MS;
}

/** The goal's page: `page_url` with `{id}` replaced, or the goal's id appended to it. */
export function goalPageUrl(pageUrl: string | undefined, sessionId: string): string | undefined {
  if (!pageUrl) return undefined;
  if (pageUrl.includes('{id}')) return pageUrl.replaceAll('{id}', encodeURIComponent(sessionId));
  return `${pageUrl.replace(/\/+$/, '')}/goals/${encodeURIComponent(sessionId)}`;
}

/** An HTTP request a target sends (the signature, which needs the secret, is added by the sender). */
export interface NotificationRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** The HTTP request of a webhook or ntfy target; null for the desktop. */
export function notificationRequest(
  target: NotifyTarget,
  payload: NotificationPayload,
  deliveryId: string,
): NotificationRequest | null {
  const page = goalPageUrl(target.page_url, payload.session_id);
  const withPage: NotificationPayload = page ? { ...payload, page_url: page } : payload;
  const delivery = { [DELIVERY_HEADER]: deliveryId };
  if (target.type === 'webhook') {
    const body =
      target.format === 'slack'
        ? JSON.stringify({
            text: slackText(withPage),
            session_id: payload.session_id,
            status: payload.status,
          })
        : JSON.stringify(withPage);
    return { url: target.url, headers: { 'Content-Type': 'application/json', ...delivery }, body };
  }
  if (target.type === 'ntfy') {
    const headers: Record<string, string> = {
      'Content-Type': 'text/plain; charset=utf-8',
      ...delivery,
      // ntfy reads these headers as the title, the priority and the buttons of the message.
      Title: asciiHeader(`goalrun: ${payload.status}`),
      Priority: payload.status === 'completed' ? '3' : '4',
      Tags: payload.status === 'completed' ? 'white_check_mark' : 'warning',
    };
    if (page) {
      headers.Click = page;
      headers.Actions = `view, Open goal, ${page}`;
    }
    if (target.token) headers.Authorization = `Bearer ${target.token}`;
    return { url: target.url, headers, body: `${payload.headline}\n${payload.objective}` };
  }
  return null;
}

/** The desktop notification's title and text (`notify-send TITLE TEXT`). */
export function desktopMessage(payload: NotificationPayload): { title: string; text: string } {
  return { title: `goalrun: ${payload.status}`, text: payload.headline };
}

/** A Slack message: the line that says what is needed, the objective, and the page when there is one. */
function slackText(payload: NotificationPayload): string {
  const lines = [`*goalrun ${payload.status}*: ${payload.headline}`, `> ${payload.objective}`];
  if (payload.page_url) lines.push(`<${payload.page_url}|Open the goal>`);
  return lines.join('\n');
}

/** HTTP header values are latin-1: anything else becomes `?`. */
function asciiHeader(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?');
}
