/** How `goalrun serve` groups goals (core/goal-groups.ts). */
import { describe, expect, it } from 'vitest';
import { actionsFor, groupOf, needsYou } from '../../core/goal-groups';

describe('goal groups', () => {
  it('puts what waits for a person first', () => {
    for (const status of [
      'waiting_approval',
      'awaiting_user',
      'budget_reached',
      'paused',
      'stalled',
      'blocked',
    ])
      expect([status, groupOf(status), needsYou(status)]).toEqual([status, 'needs_you', true]);
    expect(groupOf('running')).toBe('running');
    expect(groupOf('waiting_quota')).toBe('waiting');
    expect(groupOf('completed')).toBe('finished');
    expect(needsYou('completed')).toBe(false);
  });

  it('offers the actions that fit', () => {
    expect(actionsFor('waiting_approval')).toEqual(['approve', 'deny', 'steer', 'cancel']);
    expect(actionsFor('paused')).toContain('unpause');
    expect(actionsFor('budget_reached')).toContain('limits');
    expect(actionsFor('completed')).toEqual([]);
  });
});
