/**
 * The answer of the `finish` that ends a goal is held and stored with the goal-ended checkpoint
 * (patch finish-answered-at-end): one write where there were two. Driven through the GoalRun port
 * with a fake run; test/e2e/finish-at-end.test.ts reads a real goal's history and transcript.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { storeKeys } from '../../core/store-keys';
import { endGoal } from '../../workflows/goal-ending';
import { holdAnswerForEnd } from '../../workflows/tool-answer';
import { FakeRun, useWorkflowClock } from './fake-run';

beforeEach(() => useWorkflowClock());
afterEach(() => vi.useRealTimers());

const finishCall = { toolCallId: 'call_2_0', toolName: 'finish', summary: 'finish complete' };

describe('the answer of a finish that ends the goal', () => {
  it('is held, and the call counts as answered', () => {
    const run = new FakeRun();
    run.unanswered = [finishCall];
    holdAnswerForEnd(run, finishCall, 'goal finished: done', true);
    expect(run.unanswered).toEqual([]);
    expect(run.heldAnswer).toMatchObject({
      key: storeKeys.toolResult('call_2_0'),
      message: {
        role: 'tool',
        content: [{ toolCallId: 'call_2_0', output: { type: 'text', value: 'goal finished: done' } }],
      },
      events: { kind: 'tool', data: { toolCallId: 'call_2_0', ok: true } },
    });
  });

  it('is stored by the goal-ended checkpoint, in the same write, then let go', async () => {
    const run = new FakeRun();
    holdAnswerForEnd(run, finishCall, 'goal finished: done', true);
    await endGoal(run, 'completed', null);
    expect(run.saves).toHaveLength(1);
    expect(run.saves[0]).toMatchObject({
      full: true,
      status: 'completed',
      event: { kind: 'goal-ended' },
      answerKey: storeKeys.toolResult('call_2_0'),
    });
    expect(run.heldAnswer).toBeNull();
  });

  it('leaves the checkpoint alone when nothing is held (an end by a limit, a cap, a cancel)', async () => {
    const run = new FakeRun();
    await endGoal(run, 'limit_reached', 'step limit reached (3 steps)');
    expect(run.saves).toHaveLength(1);
    expect(run.saves[0].answerKey).toBeUndefined();
    expect(run.saves[0].event?.kind).toBe('goal-ended');
  });
});
