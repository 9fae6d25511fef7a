/** Issue 26 item 6: a new execution is hosted by the process that starts it, or by none, never by the last one. */
import { describe, expect, it } from 'vitest';
import { withHost } from '../../cli/start-goal';
import type { GoalDefinition } from '../../core/goal';

const saved = { sessionId: 's', objective: 'o', hostQueue: 'q@run-123-dead' } as GoalDefinition;

describe('the host of a new execution', () => {
  it('drops the queue of the process that ran the goal before when nobody hosts it now', () => {
    const goal = withHost(saved, undefined);
    expect('hostQueue' in goal).toBe(false);
    expect(goal.objective).toBe('o');
  });

  it('is the queue of the process that starts it when that process hosts a worker', () => {
    expect(withHost(saved, 'q@run-456-live').hostQueue).toBe('q@run-456-live');
    expect(withHost({ ...saved, hostQueue: undefined }, 'q@run-456-live').hostQueue).toBe('q@run-456-live');
  });
});
