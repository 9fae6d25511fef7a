/**
 * Sub-agents (issue 27 §2): the rules a parent goal applies when its model calls `agent`: how deep
 * children may go, how many run at once, the share of the parent's budget a child gets (reserved
 * from what the parent has left, never more than it has), and how a child's outcome is charged back
 * and told to the parent's model. Pure: the workflow (workflows/agent-tool.ts) and unit tests share it.
 */
import type { AgentArgs } from './agent-args';
import type { GoalLimits } from './goal';
import type { BreakerSettings } from './runaway-breaker';
import { clip } from './text';

/** How deep children may nest: a goal of depth 2 is offered no `agent` tool. */
export const MAX_AGENT_DEPTH = 2;
/** Children of one goal that may run at once. */
export const MAX_CONCURRENT_AGENTS = 3;
/** Steps a child gets when the call names none (still never more than the parent has left). */
export const DEFAULT_AGENT_STEPS = 40;
/** Characters of a child's objective its parent keeps in its state (the whole is in the child's session). */
const AGENT_OBJECTIVE_CHARS = 120;
/** Characters of a child's summary that travel back to the parent's model. */
export const AGENT_SUMMARY_CHARS = 4_000;

/**
 * The rate limits of a child (the runaway breaker's per-minute money and tokens): the parent's,
 * divided among the children that may run at once. A parent spends nothing while it waits for its
 * children, so the whole tree stays within the parent's rates: one governor over the tree, shared
 * again at each level. Count caps alone are a poor proxy for what a fan-out burns per minute.
 */
export function childBreaker(
  parent: Partial<BreakerSettings> | undefined,
): Partial<BreakerSettings> | undefined {
  if (!parent) return undefined;
  const share = (rate: number | undefined) => (rate === undefined ? undefined : rate / MAX_CONCURRENT_AGENTS);
  const tokens = share(parent.maxTokensPerMinute);
  const usd = share(parent.maxUsdPerMinute);
  return {
    ...parent,
    ...(tokens === undefined ? {} : { maxTokensPerMinute: Math.max(1, Math.floor(tokens)) }),
    ...(usd === undefined ? {} : { maxUsdPerMinute: usd }),
  };
}

/** What ties a child goal to its parent (in the child's GoalDefinition). */
export interface AgentLink {
  parentSessionId: string;
  parentWorkflowId: string;
  /** The child's name in its parent, e.g. `agent-2`. */
  agentId: string;
  /** 1 for a child of a top-level goal, 2 for its grandchild. */
  depth: number;
}

/** The share of the parent's budget a child holds. */
export interface AgentShare {
  maxSteps: number;
  maxCostUsd?: number;
  maxTokens?: number;
}

/** A child as its parent keeps it (state.agents): small, the rest is in the child's session. */
export interface AgentRecord {
  agentId: string;
  sessionId: string;
  workflowId: string;
  toolCallId: string;
  objective: string;
  /** `running` while the parent waits for it, then the status it ended with. */
  status: string;
  share: AgentShare;
  /** What it spent (its own children included), charged to the parent once it ended. */
  costUsd: number;
  tokens: number;
  steps: number;
  summary: string | null;
}

/** What the parent needs of a goal to decide on a child. */
export interface AgentParentFacts {
  limits: GoalLimits;
  steps: number;
  /** Money and tokens the parent has spent, its children's included. */
  spent: { costUsd: number; tokens: number };
  agents: AgentRecord[];
  depth: number;
}

/** The depth of a goal: 0 at the top, one more for each parent. */
export function depthOf(goal: { agent?: AgentLink }): number {
  return goal.agent?.depth ?? 0;
}

/** Whether a goal of this depth may start children (and so is offered the tool). */
export function mayStartAgents(depth: number): boolean {
  return depth < MAX_AGENT_DEPTH;
}

/** The children still running. */
export function runningAgents(agents: readonly AgentRecord[]): AgentRecord[] {
  return agents.filter((agent) => agent.status === 'running');
}

/** What the running children hold of the parent's budget. */
function held(agents: readonly AgentRecord[]): { steps: number; costUsd: number; tokens: number } {
  return runningAgents(agents).reduce(
    (sum, agent) => ({
      steps: sum.steps + agent.share.maxSteps,
      costUsd: sum.costUsd + (agent.share.maxCostUsd ?? 0),
      tokens: sum.tokens + (agent.share.maxTokens ?? 0),
    }),
    { steps: 0, costUsd: 0, tokens: 0 },
  );
}

/** The child's share, or why it cannot start: too deep, too many at once, or nothing left to share. */
export function agentShare(
  parent: AgentParentFacts,
  args: AgentArgs,
): { ok: true; share: AgentShare; notes: string[] } | { ok: false; error: string } {
  if (!mayStartAgents(parent.depth)) {
    return { ok: false, error: `refused: sub-agents nest at most ${MAX_AGENT_DEPTH} deep` };
  }
  if (runningAgents(parent.agents).length >= MAX_CONCURRENT_AGENTS) {
    return { ok: false, error: `refused: at most ${MAX_CONCURRENT_AGENTS} sub-agents run at once` };
  }
  const holding = held(parent.agents);
  const notes: string[] = [];
  const stepsLeft = parent.limits.maxSteps - parent.steps - holding.steps;
  if (stepsLeft < 1) return { ok: false, error: 'refused: no steps left to share (raise max_steps)' };
  const maxSteps = Math.min(args.maxSteps ?? DEFAULT_AGENT_STEPS, stepsLeft);
  if (args.maxSteps !== undefined && maxSteps < args.maxSteps)
    notes.push(`max_steps cut to ${maxSteps}, what is left`);
  const share: AgentShare = { maxSteps };
  const money = shareOf(
    'max_cost_usd',
    args.maxCostUsd,
    parent.limits.maxCostUsd,
    parent.spent.costUsd + holding.costUsd,
  );
  if (!money.ok) return money;
  const tokens = shareOf(
    'max_tokens',
    args.maxTokens,
    parent.limits.maxTokens,
    parent.spent.tokens + holding.tokens,
  );
  if (!tokens.ok) return tokens;
  if (money.value !== undefined) share.maxCostUsd = money.value;
  if (tokens.value !== undefined) share.maxTokens = tokens.value;
  if (money.note) notes.push(money.note);
  if (tokens.note) notes.push(tokens.note);
  return { ok: true, share, notes };
}

/**
 * One capped amount of a share: what was asked, within what the parent has left of its cap (a
 * 1/MAX_CONCURRENT_AGENTS part of it when nothing was asked).
 */
function shareOf(
  name: string,
  asked: number | undefined,
  cap: number | undefined,
  used: number,
): { ok: true; value?: number; note?: string } | { ok: false; error: string } {
  if (cap === undefined) return { ok: true, value: asked };
  const left = cap - used;
  if (left <= 0) return { ok: false, error: `refused: nothing left of ${name} to share` };
  // Unasked, a child gets a share of what is left, so its siblings (and the parent) keep some too.
  if (asked === undefined) {
    const part = left / MAX_CONCURRENT_AGENTS;
    return { ok: true, value: name === 'max_tokens' ? Math.floor(part) : part };
  }
  if (asked <= left) return { ok: true, value: asked };
  return { ok: true, value: left, note: `${name} cut to ${left}, what is left` };
}

/** The child's limits: its share, and the parent's other limits. */
export function childLimits(parent: GoalLimits, share: AgentShare, minutesLeft: number): GoalLimits {
  return {
    maxIterations: parent.maxIterations,
    maxSteps: share.maxSteps,
    maxMinutes: Math.max(1, Math.min(parent.maxMinutes, Math.floor(minutesLeft))),
    noProgressLimit: parent.noProgressLimit,
    ...(share.maxCostUsd !== undefined ? { maxCostUsd: share.maxCostUsd } : {}),
    ...(share.maxTokens !== undefined ? { maxTokens: share.maxTokens } : {}),
  };
}

/** The record of a child just started. */
export function startedAgent(
  fields: Omit<AgentRecord, 'status' | 'costUsd' | 'tokens' | 'steps' | 'summary'>,
): AgentRecord {
  return {
    ...fields,
    objective: clip(fields.objective.replace(/\s+/g, ' '), AGENT_OBJECTIVE_CHARS),
    status: 'running',
    costUsd: 0,
    tokens: 0,
    steps: 0,
    summary: null,
  };
}

/** What a child's run told its parent when it ended (its final snapshot, or what stands for one). */
export interface AgentOutcome {
  status: string;
  summary: string | null;
  costUsd: number;
  tokens: number;
  steps: number;
}

/** The records with one child ended: its spend is now the parent's (state.agents counts in spentOf). */
export function endedAgent(
  agents: readonly AgentRecord[],
  agentId: string,
  outcome: AgentOutcome,
): AgentRecord[] {
  return agents.map((agent) =>
    agent.agentId === agentId
      ? {
          ...agent,
          status: outcome.status,
          summary: outcome.summary === null ? null : clip(outcome.summary, AGENT_SUMMARY_CHARS),
          costUsd: outcome.costUsd,
          tokens: outcome.tokens,
          steps: outcome.steps,
        }
      : agent,
  );
}

/** What the parent's model reads when a child ended: status, summary, cost, where the rest is. */
export function agentResultText(agent: AgentRecord): string {
  return JSON.stringify(
    {
      agent: agent.agentId,
      status: agent.status,
      summary: agent.summary ?? '(no summary)',
      cost_usd: Number(agent.costUsd.toFixed(6)),
      tokens: agent.tokens,
      steps: agent.steps,
      session: agent.sessionId,
      // The child's full output stays in its own session: every message, its spooled tool outputs.
      transcript: `goalrun transcript ${agent.sessionId}`,
    },
    null,
    2,
  );
}

/** The session id of a goal's n-th child: the parent's, so the child sorts and cleans with it. */
export function agentSessionId(parentSessionId: string, n: number): string {
  return `${parentSessionId}-agent${n}`;
}

/** Whether the agent call succeeded as far as the parent's progress rules go. */
export function agentSucceeded(status: string): boolean {
  return status === 'completed';
}

/** The lines `status` and `stats` show for a goal's sub-agents and its parent (issue 27 §2). */
export function agentLines(agents: readonly AgentRecord[] | undefined, parent?: AgentLink): string[] {
  const lines: string[] = [];
  if (parent)
    lines.push(`parent     ${parent.parentSessionId} (this is its ${parent.agentId}, depth ${parent.depth})`);
  for (const agent of agents ?? []) {
    lines.push(
      `${agent.agentId.padEnd(10)} ${agent.status} · $${agent.costUsd.toFixed(4)} · ${agent.tokens} tokens · ${agent.steps} steps · ${agent.sessionId}`,
    );
  }
  return lines;
}
