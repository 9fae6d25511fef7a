/**
 * Goal state and the pure rules over it: counters, progress, stop rules. The workflow owns one
 * GoalState; everything here is deterministic so it runs inside workflow code and in unit tests.
 */
import type { CompactionState } from './compaction/state';
import type { UsageBreakdown } from './cost';
import type { LedgerEntry } from './ledger';
import {
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_MINUTES,
  DEFAULT_MAX_STEPS,
  DEFAULT_NO_PROGRESS_LIMIT,
  RECENT_ACTIONS_KEPT,
} from './limits';
import type { SandboxSettings } from './sandbox-settings';
import { renderTasksMarkdown } from './task-graph-render';
import type { TaskGraph, TaskView } from './task-graph-types';
import { LEGACY_TASK_TOOL_NAMES } from './tool-names';
import { EMPTY_USAGE, type UsageTotals } from './usage';

/**
 * Status of a goal, in the store, in search attributes and in the CLI. `paused` and
 * `waiting_approval` are waits of a running goal; `cleared` ended it in favour of a fresh session.
 */
export type GoalStatus =
  | 'running'
  | 'paused'
  | 'waiting_approval'
  | 'completed'
  | 'blocked'
  | 'failed'
  | 'cancelled'
  | 'limit_reached'
  | 'cleared';

/** Statuses after which a goal does no more work (a goal at limit_reached may still be raised with /limits). */
export const FINAL_STATUSES: GoalStatus[] = [
  'completed',
  'blocked',
  'failed',
  'cancelled',
  'limit_reached',
  'cleared',
];

/** Limits of one goal. */
export interface GoalLimits {
  maxIterations: number;
  maxSteps: number;
  maxMinutes: number;
  /** Consecutive iterations without progress before the goal is blocked. */
  noProgressLimit: number;
}

export const DEFAULT_LIMITS: GoalLimits = {
  maxIterations: DEFAULT_MAX_ITERATIONS,
  maxSteps: DEFAULT_MAX_STEPS,
  maxMinutes: DEFAULT_MAX_MINUTES,
  noProgressLimit: DEFAULT_NO_PROGRESS_LIMIT,
};

/** What a goal is and where it runs. Never holds a secret. */
export interface GoalDefinition {
  sessionId: string;
  objective: string;
  /** Absolute path of the workspace on the tool workers' host. */
  workspace: string;
  /** Model specifier, e.g. `openai:gpt-4o` or `scripted:/path/turns.json`. */
  model: string;
  /** Base URL for OpenAI-compatible providers; not a secret. */
  baseUrl?: string;
  limits: GoalLimits;
  /** Task queue of the workers that can reach the workspace; defaults to the workflow's own. */
  toolTaskQueue?: string;
  /** Auto-compact settings (config auto_compact_*); defaults from the spec when absent. */
  autoCompact?: { enabled?: boolean; thresholdPct?: number; targetPct?: number; maxFailures?: number };
  /** A context window that overrides the model card (config context_window). */
  contextWindowTokens?: number;
  /** A cheaper model for the summarizer (config summarizer_model); the goal's model when absent. */
  summarizerModel?: string;
  /** The backup model card (config backup_model): shown with the policy, not used for failover (spec F-CARDS). */
  backupModel?: string;
  /** How tool processes are contained; DEFAULT_SANDBOX when absent. */
  sandbox?: SandboxSettings;
  /**
   * A provider that cannot be reached at all (connection refused, DNS failure) for this long fails
   * the goal (config provider_unreachable_minutes); DEFAULT_PROVIDER_UNREACHABLE_MINUTES when absent.
   */
  providerUnreachableMinutes?: number;
  /** A name given with /rename (the objective names the goal until then). */
  name?: string;
}

/** One line of the recent-activity log shown by `watch` and the Web UI. */
export interface RecentAction {
  n: number;
  text: string;
}

/** The goal's durable control state. Small: message bodies stay in the store. */
export interface GoalState {
  goal: GoalDefinition;
  status: GoalStatus;
  reason: string | null;
  /** Current iteration (agent turn), 1-based. */
  iteration: number;
  /** Model steps taken so far, over all executions. */
  steps: number;
  /** Consecutive finished iterations that changed nothing. */
  noProgress: number;
  /** Whether the current iteration has made progress so far. */
  iterationProgress: boolean;
  /** Whether the current iteration has already had its plan-only nudge. */
  planNudged: boolean;
  /** Elapsed time of earlier executions and runs, in ms. */
  elapsedMsBefore: number;
  usage: UsageTotals;
  lastTool: string | null;
  /** What the tools did in the current iteration, for the continuation message. */
  changes: string[];
  recent: RecentAction[];
  actions: number;
  finishSummary: string | null;
  /** How many executions this session has had (1 for the first run; resume adds one). */
  executions: number;
  /** The task graph of the todo-write tool (spec S-TASKS). */
  tasks: TaskGraph;
  /** Compaction control state; absent until the first message exists (and in older histories). */
  compaction?: CompactionState;
  /** Usage and cost per model, summarizer calls marked (spec S-GAUGE, F-USAGE). */
  breakdown?: UsageBreakdown;
  ledger: LedgerEntry[];
}

/** The state of a goal that starts now. */
export function initialGoalState(goal: GoalDefinition): GoalState {
  return {
    goal,
    status: 'running',
    reason: null,
    iteration: 1,
    steps: 0,
    noProgress: 0,
    iterationProgress: false,
    planNudged: false,
    elapsedMsBefore: 0,
    usage: EMPTY_USAGE,
    lastTool: null,
    changes: [],
    recent: [],
    actions: 0,
    finishSummary: null,
    executions: 1,
    tasks: [],
    ledger: [],
  };
}

/** Adds a line to the recent-activity log, keeping only the newest few. */
export function noteAction(state: GoalState, text: string): GoalState {
  const actions = state.actions + 1;
  const recent = [...state.recent, { n: actions, text }].slice(-RECENT_ACTIONS_KEPT);
  return { ...state, actions, recent };
}

/** Tools whose calls change nothing in the workspace, so they never count as progress. */
// Spec: an iteration with no tool call besides task-list updates made no progress.
const NON_PROGRESS_TOOLS = new Set(['todo-write', ...LEGACY_TASK_TOOL_NAMES, 'finish']);

/** Records one tool call's outcome: progress, changes for the continuation message, last tool. */
export function recordToolOutcome(
  state: GoalState,
  outcome: { toolName: string; summary: string; ok: boolean; changedWorkspace: boolean },
): GoalState {
  const progress = !NON_PROGRESS_TOOLS.has(outcome.toolName);
  const changes =
    outcome.changedWorkspace && outcome.ok ? [...state.changes, outcome.summary].slice(-20) : state.changes;
  const next = noteAction(
    { ...state, lastTool: outcome.summary, iterationProgress: state.iterationProgress || progress, changes },
    `step ${state.steps} · ${outcome.summary}${outcome.ok ? '' : ' (error)'}`,
  );
  return next;
}

/**
 * Ends the current iteration (the model answered without a tool call). Returns the state for the
 * next iteration; an iteration that changed nothing adds to the no-progress counter.
 */
export function endIteration(state: GoalState): GoalState {
  return {
    ...state,
    noProgress: state.iterationProgress ? 0 : state.noProgress + 1,
    iteration: state.iteration + 1,
    iterationProgress: false,
    planNudged: false,
    changes: [],
  };
}

/** Why a goal must stop now, or null to go on. `elapsedMs` counts all executions. */
export function checkStopRules(
  state: GoalState,
  elapsedMs: number,
): { status: GoalStatus; reason: string } | null {
  const { limits } = state.goal;
  if (state.noProgress >= limits.noProgressLimit) {
    return {
      status: 'blocked',
      reason: `no progress in ${state.noProgress} consecutive iterations (limit ${limits.noProgressLimit})`,
    };
  }
  if (state.steps >= limits.maxSteps) {
    return { status: 'limit_reached', reason: `step limit reached (${limits.maxSteps} steps)` };
  }
  if (state.iteration > limits.maxIterations) {
    return {
      status: 'limit_reached',
      reason: `iteration limit reached (${limits.maxIterations} iterations)`,
    };
  }
  if (elapsedMs >= limits.maxMinutes * 60_000) {
    return { status: 'limit_reached', reason: `time limit reached (${limits.maxMinutes} minutes)` };
  }
  return null;
}

/** The user message that starts the next iteration of an unfinished goal. */
export function continuationMessage(state: GoalState, previousChanges: string[]): string {
  const changed =
    previousChanges.length > 0
      ? `In the last turn you did:\n${previousChanges.map((change) => `- ${change}`).join('\n')}`
      : 'The last turn changed nothing in the workspace.';
  return [
    `[goalrun] The goal is not finished yet (iteration ${state.iteration} of at most ${state.goal.limits.maxIterations}).`,
    `Objective: ${state.goal.objective}`,
    changed,
    'Continue working on the objective, or call `finish` with status "complete" (or "blocked" with the reason) if there is nothing left you can do.',
  ].join('\n\n');
}

/** The kept-progress summary saved when a goal is interrupted (spec S-SAVE). */
export function keptProgressSummary(state: GoalState, elapsedMs: number): string {
  const lines = [
    `Interrupted after ${state.steps} steps in ${state.iteration} iterations (${Math.round(elapsedMs / 1000)} s).`,
    `Objective: ${state.goal.objective}`,
  ];
  if (state.lastTool) lines.push(`Last tool call: ${state.lastTool}`);
  const recent = state.recent.slice(-8).map((action) => `- ${action.text}`);
  if (recent.length > 0) lines.push(`Recent actions:\n${recent.join('\n')}`);
  return lines.join('\n');
}

/** The message a resumed execution adds before its first step. */
export function resumeMessage(state: GoalState, keptProgress: string | null): string {
  return [
    `[goalrun] This goal was ${state.status === 'cancelled' ? 'cancelled' : 'stopped'} and has now been resumed (execution ${state.executions}).`,
    keptProgress ? `Progress kept from before:\n${keptProgress}` : null,
    'Tool calls that were interrupted did not finish; check their effects before relying on them.',
    'Continue working on the objective, or call `finish` when it is done.',
  ]
    .filter(Boolean)
    .join('\n\n');
}

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
  lastTool: string | null;
  finishSummary: string | null;
  recent: RecentAction[];
  /** The kept-progress summary of an interrupted goal (spec S-SAVE). */
  keptProgress?: string | null;
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
    lastTool: state.lastTool,
    finishSummary: state.finishSummary,
    recent: state.recent,
  };
}

/** The Markdown the Web UI shows as the workflow's current details. */
export function detailsMarkdown(snapshot: GoalSnapshot, tasks: TaskView[] = []): string {
  const lines = [
    `**Status:** ${snapshot.status}${snapshot.reason ? ` — ${snapshot.reason}` : ''}`,
    `**Iteration:** ${snapshot.iteration} · **steps:** ${snapshot.steps} · **no progress:** ${snapshot.noProgress}`,
    `**Last tool:** ${snapshot.lastTool ? `\`${snapshot.lastTool}\`` : '—'}`,
    `**Usage:** context ${snapshot.usage.contextTokens} tokens · total ${snapshot.usage.totalTokens} tokens over ${snapshot.usage.requests} requests`,
    `**Session:** \`${snapshot.sessionId}\` · **model:** \`${snapshot.model}\``,
  ];
  if (tasks.length > 0) lines.push('', '**Tasks:**', renderTasksMarkdown(tasks));
  if (snapshot.recent.length > 0) {
    lines.push('', '**Recent:**', ...snapshot.recent.slice(-8).map((action) => `- ${action.text}`));
  }
  return lines.join('\n');
}
