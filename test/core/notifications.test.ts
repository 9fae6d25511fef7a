/** The pure side of notifications (core/notifications.ts): when a status is told, and what each target gets. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { notifyStatus } from '../../core/extensions/notify-status';
import {
  goalPageUrl,
  type NotificationPayload,
  notificationPayload,
  notificationRequest,
  STALLED_RENOTIFY_MS,
  shouldNotify,
} from '../../core/notifications';
import { loadConfigFile } from '../../worker/settings';
import { tempDir } from '../support/cli';

const status = notifyStatus({
  sessionId: 's-1',
  workflowId: 'goal-s-1',
  status: 'waiting_approval',
  reason: null,
  objective: 'ship it',
  costUsd: 0.5,
  steps: 3,
  iterations: 2,
  approval: { command: 'curl example.com', justification: 'needs the net' },
});
const payload: NotificationPayload = notificationPayload(status, {
  sessionId: 's-1',
  status: 'waiting_approval',
  reason: null,
  steps: 3,
  iteration: 2,
  approval: {
    toolCallId: 'c',
    command: 'curl example.com',
    justification: 'x',
    requestedAtMs: 0,
    deadlineMs: 1,
  },
});

describe('when a status is told', () => {
  it('once per status entered', () => {
    const at = (previousStatus: string | undefined, next: string) =>
      shouldNotify({ previousStatus, status: next, lastStalledNoticeMs: undefined, nowMs: 0 });
    expect(at(undefined, 'completed')).toBe(true);
    expect(at('running', 'paused')).toBe(true);
    expect(at('paused', 'paused')).toBe(false);
  });

  it('a goal that stalls again within the hour is not told again', () => {
    const stalledAgain = (sinceMs: number) =>
      shouldNotify({ previousStatus: 'running', status: 'stalled', lastStalledNoticeMs: 0, nowMs: sinceMs });
    expect(stalledAgain(STALLED_RENOTIFY_MS - 1)).toBe(false);
    expect(stalledAgain(STALLED_RENOTIFY_MS)).toBe(true);
  });
});

describe('what a target gets', () => {
  it('the headline says what is needed and the command that answers it', () => {
    expect(payload.headline).toBe(
      'waiting for approval — `curl example.com` needs approval to run outside the sandbox — goalrun approve s-1 or goalrun deny s-1',
    );
  });

  it('a page URL with {id}, or the goal appended', () => {
    expect(goalPageUrl(undefined, 's-1')).toBeUndefined();
    expect(goalPageUrl('https://x.example/g/{id}?t=1', 's 1')).toBe('https://x.example/g/s%201?t=1');
    expect(goalPageUrl('https://x.example/', 's-1')).toBe('https://x.example/goals/s-1');
  });

  it('a webhook gets the JSON, with the page; slack gets a text message', () => {
    const json = notificationRequest(
      {
        type: 'webhook',
        url: 'https://hook.example/a',
        secret: 'never-in-the-body',
        page_url: 'https://p.example',
      },
      payload,
      'd-1',
    );
    expect(json?.headers).toMatchObject({ 'Content-Type': 'application/json', 'X-Goalrun-Delivery': 'd-1' });
    expect(JSON.parse(json?.body ?? '')).toMatchObject({
      event: 'notify',
      session_id: 's-1',
      status: 'waiting_approval',
      page_url: 'https://p.example/goals/s-1',
    });
    expect(json?.body).not.toContain('never-in-the-body');
    const slack = notificationRequest(
      { type: 'webhook', url: 'https://hook.example', format: 'slack' },
      payload,
      'd',
    );
    expect(JSON.parse(slack?.body ?? '').text).toContain('*goalrun waiting_approval*: waiting for approval');
  });

  it('ntfy gets a title, a click-through and a token; the desktop gets no request', () => {
    const ntfy = notificationRequest(
      { type: 'ntfy', url: 'https://ntfy.sh/topic', token: 'tk_1', page_url: 'https://p.example/{id}' },
      payload,
      'd',
    );
    expect(ntfy?.headers).toMatchObject({
      Title: 'goalrun: waiting_approval',
      Click: 'https://p.example/s-1',
      Actions: 'view, Open goal, https://p.example/s-1',
      Authorization: 'Bearer tk_1',
    });
    expect(ntfy?.body.split('\n')[0]).toBe(payload.headline);
    expect(notificationRequest({ type: 'desktop' }, payload, 'd')).toBeNull();
  });
});

describe('config notify', () => {
  const load = (notify: unknown) => {
    const file = path.join(tempDir('notify-config'), 'config.json');
    fs.writeFileSync(file, JSON.stringify({ notify }));
    return loadConfigFile(file);
  };

  it('takes webhooks, ntfy topics and the desktop', () => {
    const notify = [
      { type: 'webhook', url: 'https://hook.example/x', secret: 's', format: 'slack' },
      { type: 'ntfy', url: 'https://ntfy.sh/t' },
      { type: 'desktop' },
    ];
    expect(load(notify).notify).toEqual(notify);
  });

  it('names what is wrong', () => {
    expect(() => load([{ type: 'webhook', url: 'ftp://x' }])).toThrow(/notify.*must be an http\(s\) URL/s);
    expect(() => load([{ type: 'pager', url: 'https://x' }])).toThrow(/notify/);
    expect(() => load([{ type: 'webhook', url: 'https://x', secrett: 'y' }])).toThrow(/secrett/);
  });
});
