/** Sub-agents (issue 27 §2): the share a child gets, the limits on them, and claims on the parent's graph. */
import { describe, expect, it } from 'vitest';
import { parseAgentArgs } from '../../core/agent-args';
import { applyAgentClaim } from '../../core/agent-tasks';
import {
  type AgentParentFacts,
  type AgentRecord,
  agentShare,
  childLimits,
  DEFAULT_AGENT_STEPS,
  endedAgent,
  MAX_AGENT_DEPTH,
  MAX_CONCURRENT_AGENTS,
  startedAgent,
} from '../../core/agents';
import { DEFAULT_LIMITS } from '../../core/goal';
import { spentOf } from '../../core/spend-cap';
import { EMPTY_USAGE } from '../../core/usage';

const parent = (over: Partial<AgentParentFacts> = {}): AgentParentFacts => ({
  limits: { ...DEFAULT_LIMITS, maxSteps: 100, maxCostUsd: 1 },
  steps: 10,
  spent: { costUsd: 0.4, tokens: 0 },
  agents: [],
  depth: 0,
  ...over,
});

const child = (agentId: string, status = 'running', maxCostUsd?: number): AgentRecord => ({
  ...startedAgent({
    agentId,
    sessionId: `s-${agentId}`,
    workflowId: `goalrun-s-${agentId}`,
    toolCallId: 'c',
    objective: 'x',
    share: { maxSteps: 20, ...(maxCostUsd !== undefined ? { maxCostUsd } : {}) },
  }),
  status,
});

describe('agentShare', () => {
  it('gives what was asked within what is left, and a third of what is left when nothing was asked', () => {
    const asked = agentShare(parent(), { prompt: 'p', isolation: 'none', maxSteps: 5, maxCostUsd: 0.1 });
    expect(asked).toEqual({ ok: true, share: { maxSteps: 5, maxCostUsd: 0.1 }, notes: [] });
    const unasked = agentShare(parent(), { prompt: 'p', isolation: 'none' });
    expect(unasked.ok && unasked.share.maxSteps).toBe(DEFAULT_AGENT_STEPS);
    expect(unasked.ok && unasked.share.maxCostUsd).toBeCloseTo(0.6 / 3, 9);
  });

  it("never gives more than the parent has left, running siblings' shares held", () => {
    const facts = parent({ agents: [child('agent-1', 'running', 0.5)] });
    const share = agentShare(facts, { prompt: 'p', isolation: 'none', maxCostUsd: 0.5, maxSteps: 500 });
    expect(share.ok).toBe(true);
    if (!share.ok) return;
    expect(share.share.maxCostUsd).toBeCloseTo(0.1, 9);
    expect(share.share.maxSteps).toBe(100 - 10 - 20);
    expect(share.notes.join(' ')).toContain('cut');
    const broke = agentShare(parent({ spent: { costUsd: 1, tokens: 0 } }), {
      prompt: 'p',
      isolation: 'none',
    });
    expect(broke).toMatchObject({ ok: false });
  });

  it('refuses past the depth limit and past the number running at once', () => {
    expect(agentShare(parent({ depth: MAX_AGENT_DEPTH }), { prompt: 'p', isolation: 'none' })).toMatchObject({
      ok: false,
      error: expect.stringContaining('deep'),
    });
    const full = Array.from({ length: MAX_CONCURRENT_AGENTS }, (_, i) => child(`agent-${i + 1}`));
    expect(agentShare(parent({ agents: full }), { prompt: 'p', isolation: 'none' })).toMatchObject({
      ok: false,
      error: expect.stringContaining('at once'),
    });
    // An ended child frees its place.
    full[0] = { ...full[0], status: 'completed' };
    expect(agentShare(parent({ agents: full }), { prompt: 'p', isolation: 'none' }).ok).toBe(true);
  });

  it('gives the child limits no larger than the parent', () => {
    const limits = childLimits({ ...DEFAULT_LIMITS, maxMinutes: 60 }, { maxSteps: 7, maxCostUsd: 0.2 }, 12.5);
    expect(limits).toMatchObject({ maxSteps: 7, maxCostUsd: 0.2, maxMinutes: 12 });
  });
});

describe("a child's spend", () => {
  it('is charged to the parent once it ended: spentOf counts it', () => {
    const agents = endedAgent([child('agent-1')], 'agent-1', {
      status: 'budget_exhausted',
      summary: 'half done',
      costUsd: 0.25,
      tokens: 900,
      steps: 3,
    });
    expect(agents[0]).toMatchObject({ status: 'budget_exhausted', costUsd: 0.25, summary: 'half done' });
    const spent = spentOf({ usage: { ...EMPTY_USAGE, totalTokens: 100 }, agents });
    expect(spent).toEqual({ costUsd: 0.25, tokens: 1000 });
  });
});

describe('parseAgentArgs', () => {
  it('takes prompt or objective, and refuses an empty one with a reason', () => {
    expect(parseAgentArgs({ objective: 'do it', max_steps: 3 })).toEqual({
      ok: true,
      args: { prompt: 'do it', maxSteps: 3, isolation: 'none' },
    });
    expect(parseAgentArgs('{"prompt":"x","isolation":"worktree"}')).toMatchObject({
      ok: true,
      args: { isolation: 'worktree' },
    });
    expect(parseAgentArgs({ prompt: ' ' })).toMatchObject({
      ok: false,
      error: expect.stringContaining('prompt'),
    });
  });
});

describe('applyAgentClaim', () => {
  const graph = [
    { id: 'task-1', content: 'a', status: 'pending' as const, dependencies: [] },
    { id: 'task-2', content: 'b', status: 'pending' as const, dependencies: [] },
  ];
  const claim = (agentId: string, id: string, status: 'in_progress' | 'completed') => ({
    id: `${agentId}:${id}:${status}`,
    agentId,
    args: { todos: [{ index: 0, id, status }], merge: true, delete: [], clearCompleted: false },
  });

  it('marks the claimed task as held by the agent, and refuses a task another running agent holds', () => {
    const agents = [child('agent-1'), child('agent-2')];
    const first = applyAgentClaim(graph, {}, agents, claim('agent-1', 'task-1', 'in_progress'));
    expect(first.ok).toBe(true);
    expect(first.holders).toEqual({ 'task-1': 'agent-1' });
    expect(first.tasks.find((task) => task.id === 'task-1')?.status).toBe('in_progress');
    const stolen = applyAgentClaim(
      first.tasks,
      first.holders,
      agents,
      claim('agent-2', 'task-1', 'in_progress'),
    );
    expect(stolen).toMatchObject({ ok: false, tasks: first.tasks });
    expect(stolen.text).toContain('held by agent-1');
    const done = applyAgentClaim(first.tasks, first.holders, agents, claim('agent-1', 'task-1', 'completed'));
    expect(done.tasks.find((task) => task.id === 'task-1')?.status).toBe('completed');
  });

  it('merges a full list instead of replacing the parent’s', () => {
    const outcome = applyAgentClaim(graph, {}, [child('agent-1')], {
      id: 'x',
      agentId: 'agent-1',
      args: { todos: [{ index: 0, content: 'c' }], merge: false, delete: [], clearCompleted: false },
    });
    expect(outcome.ok).toBe(true);
    expect(outcome.tasks.map((task) => task.id)).toEqual(['task-1', 'task-2', 'task-3']);
  });
});
