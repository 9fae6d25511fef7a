import { describe, expect, it } from 'vitest';
import {
  describeRequest,
  GoalInbox,
  type InboxRequest,
  InboxRequestError,
  MAX_INBOX_BYTES,
  MAX_INBOX_REQUESTS,
  needsBoundary,
  steeringRequest,
} from '../../core/goal-inbox';

function inbox(): { inbox: GoalInbox; held: () => InboxRequest[] } {
  let held: InboxRequest[] = [];
  return {
    inbox: new GoalInbox(
      () => held,
      (next) => {
        held = next;
      },
    ),
    held: () => held,
  };
}

const steer = (id: string, text = 'use tabs'): InboxRequest => ({ kind: 'steer', id, text, from: 'a@b' });
const command = (id: string, text: string): InboxRequest => steeringRequest({ id, text, from: 'a@b' });

describe('the goal inbox', () => {
  it('parses app commands and refuses a bad one with the parser’s words', () => {
    expect(command('1', '/pause')).toMatchObject({ kind: 'command', command: { name: 'pause' } });
    expect(steeringRequest({ id: '2', text: 'plain text', from: 'x' }).kind).toBe('steer');
    expect(() => command('3', '/paws')).toThrow(InboxRequestError);
    expect(() => command('3', '/paws')).toThrow(/unknown command "\/paws"/);
    expect(() => command('4', '/limits max_steps=zero')).toThrow(/max_steps must be a positive whole number/);
  });

  it('keeps steering, compaction and /clear for the step boundary, and runs the rest during a step', () => {
    expect(needsBoundary(steer('1'))).toBe(true);
    expect(needsBoundary({ kind: 'compact', id: '2', topic: '', from: 'x' })).toBe(true);
    expect(needsBoundary(command('3', '/clear'))).toBe(true);
    expect(needsBoundary(command('4', '/compact tests'))).toBe(true);
    expect(needsBoundary(command('5', '/pause'))).toBe(false);
    expect(needsBoundary(command('6', '/limits max_steps=9'))).toBe(false);
    expect(needsBoundary({ kind: 'auto-compact', id: '7', on: false, from: 'x' })).toBe(false);
  });

  it('takes what is due in each phase, oldest first, and leaves the rest in order', () => {
    const { inbox: queue, held } = inbox();
    queue.add(steer('s1'));
    queue.add(command('c1', '/pause'));
    queue.add(steer('s2'));
    queue.add(command('c2', '/unpause'));
    expect(queue.hasDue('step')).toBe(true);
    expect(queue.takeNext('step')?.id).toBe('c1');
    expect(queue.takeNext('step')?.id).toBe('c2');
    expect(queue.takeNext('step')).toBeNull();
    expect(queue.hasDue('step')).toBe(false);
    expect(held().map((request) => request.id)).toEqual(['s1', 's2']);
    expect(queue.takeNext('boundary')?.id).toBe('s1');
    expect(queue.takeAll().map((request) => request.id)).toEqual(['s2']);
    expect(held()).toEqual([]);
  });

  it('is bounded in count and in bytes, with errors that name the limit', () => {
    const { inbox: queue } = inbox();
    for (let n = 0; n < MAX_INBOX_REQUESTS; n++) queue.add(steer(`s${n}`));
    expect(() => queue.add(steer('one-more'))).toThrow(`at most ${MAX_INBOX_REQUESTS}`);
    expect(queue.addRefused({ id: 'x', text: '/paws', from: 'a' }, 'unknown command')).toBe(false);

    const other = inbox().inbox;
    const long = 'x'.repeat(30_000);
    let added = 0;
    expect(() => {
      for (;;) {
        other.add(steer(`l${added}`, long));
        added++;
      }
    }).toThrow(`at most ${MAX_INBOX_BYTES}`);
    expect(added).toBeGreaterThan(0);
    expect(added).toBeLessThan(MAX_INBOX_BYTES / 30_000 + 1);
    expect(JSON.stringify(other.requests).length).toBeLessThanOrEqual(MAX_INBOX_BYTES);
  });

  it('keeps a refused signal short, to report it', () => {
    const { inbox: queue, held } = inbox();
    expect(
      queue.addRefused({ id: 'r', text: `/model ${'z'.repeat(5_000)}`, from: 'me' }, 'unknown provider'),
    ).toBe(true);
    const [refused] = held();
    expect(refused.kind).toBe('refused');
    expect(JSON.stringify(refused).length).toBeLessThan(1_000);
    expect(queue.hasDue('step')).toBe(true);
  });

  it('names a request in a notice by what it is and who sent it', () => {
    expect(describeRequest(command('1', '/pause'))).toBe('/pause from a@b');
    expect(describeRequest({ kind: 'compact', id: '2', topic: '', from: 'x' })).toBe('the compaction');
    expect(describeRequest({ kind: 'auto-compact', id: '3', on: false, from: 'x' })).toBe('auto-compact off');
    expect(describeRequest({ kind: 'approval', id: '4', reply: { decision: 'deny', from: 'ann' } })).toBe(
      'the denial from ann',
    );
    expect(describeRequest(steer('5'))).toBe('the request from a@b');
  });
});
