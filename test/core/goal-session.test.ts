import { describe, expect, it } from 'vitest';
import { type GoalDefinition, initialGoalState } from '../../core/goal';
import { GoalRequestError, GoalSession, MAX_STEERING_CHARS } from '../../core/goal-session';

const goal: GoalDefinition = {
  sessionId: 'abc-1',
  objective: 'make it work',
  workspace: '/ws',
  model: 'openai:gpt-4o',
  limits: { maxIterations: 10, maxSteps: 5, maxMinutes: 1, noProgressLimit: 3 },
};

/** A session on a clock the test moves by hand. */
function sessionAt(start = 1_000_000) {
  const clock = { now: start };
  const session = new GoalSession(initialGoalState(goal), () => clock.now);
  return { session, clock };
}

describe('the goal clock', () => {
  it('counts working time only: a pause stops it and the time limit with it', () => {
    const { session, clock } = sessionAt();
    clock.now += 20_000;
    session.stopClock();
    clock.now += 90_000; // paused for 90 s, longer than the whole limit
    expect(session.elapsedMs()).toBe(20_000);
    expect(session.stopDecision()).toBeNull();
    session.startClock();
    clock.now += 39_999;
    expect(session.stopDecision()).toBeNull();
    expect(session.remainingMs()).toBe(1);
    clock.now += 1;
    expect(session.stopDecision()).toMatchObject({ status: 'limit_reached', limit: 'minutes' });
  });

  it('folds the running time into the saved state, so it carries over continue-as-new', () => {
    const { session, clock } = sessionAt();
    clock.now += 5_000;
    expect(session.savedState().elapsedMsBefore).toBe(5_000);
    const next = new GoalSession(session.savedState(), () => clock.now);
    clock.now += 1_000;
    expect(next.elapsedMs()).toBe(6_000);
  });
});

describe('steering', () => {
  it('queues a message once per id and forgets it when delivered', () => {
    const { session } = sessionAt();
    const request = { id: 's1', text: 'use the v2 API', from: 'ann@box' };
    expect(session.queueSteering(request)).toBe(true);
    expect(session.queueSteering(request)).toBe(false);
    session.steeringDelivered('s1');
    expect(session.pendingSteering).toEqual([]);
    expect(session.queueSteering(request)).toBe(false);
    expect(session.knowsSteering('s1')).toBe(true);
  });

  it('drops what is still queued when the goal ends, so a later resume does not deliver it', () => {
    const { session } = sessionAt();
    const first = { id: 's1', text: 'one', from: 'ann@box' };
    const second = { id: 's2', text: 'two', from: 'bob@box' };
    session.queueSteering(first);
    session.queueSteering(second);
    session.steeringDelivered('s1');
    expect(session.dropPendingSteering()).toEqual([second]);
    expect(session.pendingSteering).toEqual([]);
    expect(session.savedState().pendingSteering).toEqual([]);
    expect(session.dropPendingSteering()).toEqual([]);
  });

  it('rejects empty, oversized and late messages with a reason', () => {
    const { session } = sessionAt();
    expect(() => session.checkSteering({ id: 'a', text: '  ', from: 'x' })).toThrow(
      'the steering message is empty',
    );
    expect(() =>
      session.checkSteering({ id: 'a', text: 'x'.repeat(MAX_STEERING_CHARS + 1), from: 'x' }),
    ).toThrow(/at most 32000 are accepted/);
    session.setStatus('completed');
    expect(() => session.checkSteering({ id: 'a', text: 'hi', from: 'x' })).toThrow(GoalRequestError);
    expect(() => session.checkSteering({ id: 'a', text: 'hi', from: 'x' })).toThrow(
      /goalrun resume abc-1 --message/,
    );
  });
});

describe('commands', () => {
  it('pause and unpause toggle the flag and say so', () => {
    const { session } = sessionAt();
    expect(session.pause()).toMatch(/^pausing/);
    expect(session.state.paused).toBe(true);
    expect(session.pause()).toBe('the goal is already paused');
    expect(session.unpause()).toBe('unpaused: the goal goes on');
    expect(session.unpause()).toBe('the goal is not paused');
  });

  it('raising a limit lifts a goal off it; lowering can put it at one', () => {
    const { session } = sessionAt();
    session.state = { ...session.state, steps: 5 };
    expect(session.stopDecision()).toMatchObject({ limit: 'steps' });
    expect(session.setLimits({ maxSteps: 8 })).toBe('limits changed: max_steps 5 → 8');
    expect(session.stopDecision()).toBeNull();
    expect(session.setLimits({ maxSteps: 4, maxIterations: 20 })).toBe(
      'limits changed: max_steps 8 → 4, max_iterations 10 → 20; still at a limit: step limit reached (4 steps)',
    );
  });

  it('a model switch and a rename change the goal definition', () => {
    const { session } = sessionAt();
    session.state = { ...session.state, modelNote: 'no model card' };
    expect(session.setModel('anthropic:claude-haiku-4-5')).toBe(
      'model switched from openai:gpt-4o to anthropic:claude-haiku-4-5',
    );
    expect(session.state.goal.model).toBe('anthropic:claude-haiku-4-5');
    expect(session.state.modelNote).toBeNull();
    session.rename('parser work');
    expect(session.snapshot('w').name).toBe('parser work');
  });
});

describe('approvals', () => {
  it('waits with the command and the reason, then goes back to running', () => {
    const { session, clock } = sessionAt();
    expect(() => session.checkApprovalAnswer()).toThrow('no command is waiting for approval');
    session.requestApproval(
      { toolCallId: 'c1', command: 'curl example.com', justification: 'fetch docs' },
      2,
    );
    expect(session.state.status).toBe('waiting_approval');
    expect(session.state.approval).toMatchObject({
      command: 'curl example.com',
      deadlineMs: clock.now + 120_000,
    });
    expect(session.snapshot('w').approval?.justification).toBe('fetch docs');
    session.checkApprovalAnswer();
    session.approvalAnswered('denied', 'not today');
    expect(session.state).toMatchObject({ status: 'running', approval: null });
    expect(session.state.recent.at(-1)?.text).toBe('denied: curl example.com (not today)');
  });
});

describe('jobs', () => {
  it('records started jobs with the time and marks them ended', () => {
    const { session, clock } = sessionAt();
    expect(session.nextJobId()).toBe('job-1');
    session.jobStarted({ jobId: 'job-1', command: 'npx vite', processQueue: 'q' });
    expect(session.job('job-1')).toMatchObject({ status: 'running', startedAtMs: clock.now });
    expect(session.nextJobId()).toBe('job-2');
    session.jobsEnded('all', 'killed');
    expect(session.job('job-1')?.status).toBe('killed');
    expect(session.snapshot('w').runningJobs).toBe(0);
  });
});
