import { describe, expect, it } from 'vitest';
import { type GoalDefinition, type GoalState, initialGoalState } from '../../core/goal';
import { resumedState } from '../../core/resumed-state';

const goal: GoalDefinition = {
  sessionId: 'abc-1',
  objective: 'make it work',
  workspace: '/ws',
  model: 'openai:gpt-4o',
  limits: { maxIterations: 10, maxSteps: 5, maxMinutes: 1, noProgressLimit: 3 },
  hostQueue: 'goalrun-host@old',
};

/** A state saved by an execution that stopped mid-flight: paused, waiting for approval, jobs running. */
function stoppedState(): GoalState {
  return {
    ...initialGoalState(goal),
    status: 'limit_reached',
    reason: 'step limit',
    steps: 5,
    executions: 2,
    paused: true,
    approval: {
      toolCallId: 'call-1',
      command: 'curl example.com',
      justification: 'needs the network',
      requestedAtMs: 0,
      deadlineMs: 1_800_000,
    },
    runningTool: 'bash: npm test',
    jobs: [
      { jobId: 'job-1', command: 'sleep 100', status: 'running', startedAtMs: 1, processQueue: 'q' },
      { jobId: 'job-2', command: 'true', status: 'exited', startedAtMs: 2, processQueue: 'q', exitCode: 0 },
    ],
  };
}

describe('the state of a resumed execution', () => {
  it('runs again under its own execution number, with nothing of the stopped execution in flight', () => {
    const state = resumedState(stoppedState(), { execution: 3 });
    expect(state).toMatchObject({
      status: 'running',
      reason: null,
      executions: 3,
      paused: false,
      approval: null,
      runningTool: null,
      steps: 5,
    });
  });

  it('counts running jobs as lost and keeps finished ones as they were', () => {
    const state = resumedState(stoppedState(), { execution: 3 });
    expect(state.jobs.map((job) => [job.jobId, job.status])).toEqual([
      ['job-1', 'lost'],
      ['job-2', 'exited'],
    ]);
  });

  it('raises only the limits given, and is hosted by the resuming process or by nobody', () => {
    const raised = resumedState(stoppedState(), {
      execution: 3,
      limitsOverride: { maxSteps: 50 },
      hostQueue: 'goalrun-host@new',
    });
    expect(raised.goal.limits).toEqual({
      maxIterations: 10,
      maxSteps: 50,
      maxMinutes: 1,
      noProgressLimit: 3,
    });
    expect(raised.goal.hostQueue).toBe('goalrun-host@new');
    expect(resumedState(stoppedState(), { execution: 3 }).goal.hostQueue).toBeUndefined();
  });

  it('trusts the project again at this execution only with resume --trust-project', () => {
    const saved = { ...stoppedState(), goal: { ...goal, extensions: { mcpConfigFile: '/cfg/mcp.json' } } };
    expect(resumedState(saved, { execution: 4, trustProject: true }).goal.extensions).toEqual({
      mcpConfigFile: '/cfg/mcp.json',
      trustProject: true,
      trustedExecution: 4,
    });
    expect(resumedState(saved, { execution: 4 }).goal.extensions).toEqual({ mcpConfigFile: '/cfg/mcp.json' });
  });

  it('leaves the saved state as it was', () => {
    const saved = stoppedState();
    resumedState(saved, { execution: 3, limitsOverride: { maxSteps: 50 } });
    expect(saved).toEqual(stoppedState());
  });
});
