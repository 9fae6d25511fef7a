/**
 * What `status --json`, the `state` query and `run --json` report about a goal: a snapshot of its
 * state at a given elapsed time. Deterministic, so the workflow answers its query with it.
 */
import type { AgentLink, AgentRecord } from './agents';
import type { GoalLimits, GoalState, GoalStatus, PendingApproval, RecentAction } from './goal';
import type { SandboxSettings } from './sandbox-settings';
import { type BudgetView, budgetView, hasCap, spentOf } from './spend-cap';
import type { UsageTotals } from './usage';
import type { CheckOutcome } from './verify';

/** What `status --json`, the `state` query and `run --json` report about a goal. */
export interface GoalSnapshot {
  sessionId: string;
  workflowId: string;
  status: GoalStatus;
  reason: string | null;
  objective: string;
  model: string;
  workspace: string;
  iteration: number;
  steps: number;
  noProgress: number;
  elapsedMs: number;
  usage: UsageTotals;
  /** What the goal has cost so far in US dollars, summarizer calls included (0 without card prices). */
  costUsd: number;
  lastTool: string | null;
  finishSummary: string | null;
  recent: RecentAction[];
  /** The kept-progress summary of an interrupted goal (spec S-SAVE). */
  keptProgress?: string | null;
  /** The name given with /rename. */
  name?: string;
  limits?: GoalLimits;
  /** The sandbox policy (shown because `off` must never go unnoticed). */
  sandbox?: SandboxSettings['mode'];
  /** The escalation waiting for approval. */
  approval?: PendingApproval | null;
  /** Background jobs still running. */
  runningJobs?: number;
  /** Said once about the model, e.g. that it has no model card. */
  modelNote?: string | null;
  /** The final result matching the goal's output schema. */
  result?: unknown;
  /** Spent, reserved and cap, for a goal with a money or token cap (issue 18). */
  budget?: BudgetView;
  /** Whether the goal ended completed with every check passed (false without checks). */
  verified?: boolean;
  /** The checks of the last finish that ran them, with their exit codes; empty when none ran. */
  checks?: CheckOutcome[];
  /** The objective's parts the last finish claimed (`finish`'s objective_parts), beside the objective as written. */
  claimedParts?: string[];
  /** The sub-agents it started, each with its status and cost (included in costUsd). */
  agents?: AgentRecord[];
  /** Its parent, for a sub-agent. */
  parent?: AgentLink;
}

/** The snapshot of a goal state at a given elapsed time. */
export function snapshotOf(
  state: Omit<GoalState, 'ledger'>,
  workflowId: string,
  elapsedMs: number,
): GoalSnapshot {
  return {
    sessionId: state.goal.sessionId,
    workflowId,
    status: state.status,
    reason: state.reason,
    objective: state.goal.objective,
    model: state.goal.model,
    workspace: state.goal.workspace,
    iteration: state.iteration,
    steps: state.steps,
    noProgress: state.noProgress,
    elapsedMs,
    usage: state.usage,
    costUsd: spentOf(state).costUsd,
    lastTool: state.lastTool,
    finishSummary: state.finishSummary,
    recent: state.recent,
    ...(state.goal.name ? { name: state.goal.name } : {}),
    limits: state.goal.limits,
    sandbox: state.goal.sandbox?.mode ?? 'workspace-write',
    approval: state.approval ?? null,
    runningJobs: (state.jobs ?? []).filter((job) => job.status === 'running').length,
    modelNote: state.modelNote ?? null,
    ...(state.finishResult !== undefined ? { result: state.finishResult } : {}),
    ...(state.agents?.length ? { agents: state.agents } : {}),
    ...(state.goal.agent ? { parent: state.goal.agent } : {}),
    ...(hasCap(state.goal.limits)
      ? { budget: budgetView(spentOf(state), state.budgetReserved ?? null, state.goal.limits) }
      : {}),
    verified: isVerified(state),
    checks: state.verification?.checks ?? [],
    ...(state.claimedParts ? { claimedParts: state.claimedParts } : {}),
  };
}

/** Whether a goal ended completed with its checks passed: never for a goal without checks. */
export function isVerified(state: Pick<GoalState, 'status' | 'verification'>): boolean {
  return state.status === 'completed' && state.verification?.passed === true;
}
