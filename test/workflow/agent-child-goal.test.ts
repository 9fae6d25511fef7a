/** What a sub-agent's goal takes from its parent's (workflows/agent-tool.ts childGoal). */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, type GoalDefinition } from '../../core/goal';
import { childGoal } from '../../workflows/agent-tool';

const parent: GoalDefinition = {
  sessionId: 'p-1',
  objective: 'the whole job',
  workspace: '/w/tree',
  model: 'openai:gpt-4o-mini',
  limits: DEFAULT_LIMITS,
  name: 'parent',
  hostQueue: 'q@run-1',
  worktree: { path: '/w/tree', branch: 'goalrun/parent', repository: '/w/repo', project: '/w/repo' },
  verify: { checks: ['npm test'] },
  notifyTargets: 2,
  images: [],
  breaker: { repeatLimit: 5, maxTokensPerMinute: 30_000, maxUsdPerMinute: 0.3 },
  appendSystemPrompt: 'be brief',
};

describe('a sub-agent goal', () => {
  it('keeps the model, workspace and settings, and none of what is the parent’s own', () => {
    const child = childGoal(parent, { prompt: 'one part' } as never, 'p-1-agent1', {
      parentSessionId: 'p-1',
      parentWorkflowId: 'goal-p-1',
      agentId: 'agent1',
      depth: 1,
    } as never);
    expect(child).toMatchObject({
      sessionId: 'p-1-agent1',
      objective: 'one part',
      workspace: '/w/tree',
      model: 'openai:gpt-4o-mini',
      appendSystemPrompt: 'be brief',
    });
    // Its clean must never remove the parent's worktree; the parent's checks judge the whole objective.
    // One rate governor over the tree: the children that may run at once share the parent's rates.
    expect(child.breaker).toMatchObject({ repeatLimit: 5, maxTokensPerMinute: 10_000 });
    expect(child.breaker?.maxUsdPerMinute).toBeCloseTo(0.1, 9);
    for (const key of ['name', 'hostQueue', 'worktree', 'verify', 'notifyTargets', 'images'])
      expect(child).not.toHaveProperty(key);
  });
});
