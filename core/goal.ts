/**
 * A goal's durable state. The workflow owns one GoalState; the rules over it are in goal-rules.ts,
 * the texts it writes in goal-messages.ts, and what `status` reports of it in goal-snapshot.ts.
 * Everything here is deterministic, so it runs inside workflow code and in unit tests alike.
 */
import type { AgentLink, AgentRecord } from './agents';
import type { CompactionState } from './compaction/state';
import type { UsageBreakdown } from './cost';
import type { ExtensionSources, WorkspaceContextCounts } from './extensions/workspace-context';
import type { FailoverSettings, FailoverState } from './failover';
import type { InboxRequest } from './goal-inbox';
import type { JobRecord } from './jobs-registry';
import type { LedgerEntry } from './ledger';
import {
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_MINUTES,
  DEFAULT_MAX_STEPS,
  DEFAULT_NO_PROGRESS_LIMIT,
  RECENT_ACTION_MAX_CHARS,
  RECENT_ACTIONS_KEPT,
} from './limits';
import type { ImagePart } from './messages';
import type { BreakerSettings, BreakerState } from './runaway-breaker';
import type { SandboxSettings } from './sandbox-settings';
import type { SpendAmount } from './spend-cap';
import type { TaskGraph } from './task-graph-types';
import { clip } from './text';
import type { ToolRules } from './tool-rules';
import { EMPTY_USAGE, type UsageTotals } from './usage';
import type { VerificationState, VerifySettings } from './verify';
import type { SnapshotLimits, SnapshotState } from './workspace-snapshot-state';

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
  | 'cleared'
  | 'budget_reached'
  | 'waiting_quota'
  /** Running, but the session store is out of reach: its calls are retried until it is back (patch store-outage-wait). */
  | 'waiting_store'
  /** Running, but no step finished for stalled_after_minutes (set by the workflow's stall watch). */
  | 'stalled'
  /** The model says it is done and the checks passed; a person's sign-off decides (issue 27 §1). */
  | 'awaiting_user'
  /** A sub-agent reached its share of its parent's budget and handed back what it had (issue 27 §2); never a success. */
  | 'budget_exhausted';

/** Statuses after which a goal does no more work (a goal at limit_reached or budget_reached may still be raised with /limits). */
export const FINAL_STATUSES: GoalStatus[] = [
  'completed',
  'blocked',
  'failed',
  'cancelled',
  'limit_reached',
  'cleared',
  'budget_reached',
  'budget_exhausted',
];

/** Limits of one goal. */
export interface GoalLimits {
  maxIterations: number;
  maxSteps: number;
  maxMinutes: number;
  /** Consecutive iterations without progress before the goal is blocked. */
  noProgressLimit: number;
  /** Money cap in US dollars, summarizer included (issue 18); at it the goal waits in budget_reached. */
  maxCostUsd?: number;
  /** Token cap (input plus output of every request, summarizer included); like maxCostUsd. */
  maxTokens?: number;
}

export const DEFAULT_LIMITS: GoalLimits = {
  maxIterations: DEFAULT_MAX_ITERATIONS,
  maxSteps: DEFAULT_MAX_STEPS,
  maxMinutes: DEFAULT_MAX_MINUTES,
  noProgressLimit: DEFAULT_NO_PROGRESS_LIMIT,
};

/** The git worktree a goal runs in (`--worktree`): where, on which branch, of which repository. */
export interface GoalWorktree {
  /** The worktree's top, under $GOALRUN_HOME/worktrees. */
  path: string;
  /** `goalrun/<name or short id>`. */
  branch: string;
  /** The top of the repository it was made from. */
  repository: string;
  /** The workspace the goal was started in: its project (`list` and `clean` there find the goal). */
  project?: string;
}

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
  /**
   * The variable that holds an `openai-compatible` endpoint's key (`--api-key-env`, config
   * `api_key_env`): a name, never a value; the worker that calls the model reads it.
   */
  apiKeyEnv?: string;
  limits: GoalLimits;
  /** Task queue of the workers that can reach the workspace; defaults to the workflow's own. */
  toolTaskQueue?: string;
  /** Auto-compact settings (config auto_compact_*); defaults from the spec when absent. */
  autoCompact?: { enabled?: boolean; thresholdPct?: number; targetPct?: number; maxFailures?: number };
  /** A context window that overrides the model card (config context_window). */
  contextWindowTokens?: number;
  /** A cheaper model for the summarizer (config summarizer_model); the goal's model when absent. */
  summarizerModel?: string;
  /**
   * The backup model (`--backup-model`, config backup_model): the next steps go to it after the
   * provider failed failover_after_failures times in a row or for failover_after_minutes (issue 27 §3).
   */
  backupModel?: string;
  /** Where the backup's requests go (config backup_base_url; else the goal's base URL for a backup of the same provider). */
  backupBaseUrl?: string;
  /** When the goal fails over and how long it stays on the backup (config failover_*); the defaults where absent. */
  failover?: FailoverSettings;
  /** How tool processes are contained; DEFAULT_SANDBOX when absent. */
  sandbox?: SandboxSettings;
  /**
   * A provider that cannot be reached at all (connection refused, DNS failure) for this long fails
   * the goal (config provider_unreachable_minutes); DEFAULT_PROVIDER_UNREACHABLE_MINUTES when absent.
   */
  providerUnreachableMinutes?: number;
  /** A model stream silent this long (seconds) is retried as stalled (config stream_idle_timeout_s); the default when absent. */
  streamIdleTimeoutS?: number;
  /** A name given with /rename (the objective names the goal until then). */
  name?: string;
  /**
   * The queue of the `run` or `resume` process that hosts this goal in the foreground: its model calls
   * and tools go there, so that process runs this goal's steps and no other goal's. When the process is
   * gone (a call waits there unclaimed), the goal falls back to the store's shared workers.
   */
  hostQueue?: string;
  /**
   * Where the tool host finds this goal's MCP servers and hooks besides its own config: references
   * (a file path on the tool host, a trust flag), never a value from them.
   */
  extensions?: ExtensionSources;
  /** Text added at the end of the system prompt (`--append-system-prompt`), capped at APPENDED_PROMPT_MAX_CHARS. */
  appendSystemPrompt?: string;
  /** Which tool calls may run (`--allowed-tools`, `--disallowed-tools`); checked on the tool host. */
  toolRules?: ToolRules;
  /**
   * A JSON Schema the goal's final result must match (`--output-schema`): `finish` then requires a
   * `result` that matches it. Capped at OUTPUT_SCHEMA_MAX_BYTES.
   */
  outputSchema?: Record<string, unknown>;
  /**
   * Images for the first message (`--image`): references to rows the CLI stored before the goal
   * started (never their bytes), sent as image parts after the objective.
   */
  images?: ImagePart[];
  /**
   * How long a goal at its money or token cap waits for a raise before it ends as budget_reached
   * (config budget_wait_minutes); a day when absent.
   */
  budgetWaitMinutes?: number;
  /** The git worktree made for this goal (`--worktree`); its workspace is inside it. */
  worktree?: GoalWorktree;
  /**
   * How many targets config `notify` had when the goal started (a webhook, ntfy, the desktop): the
   * workflow notifies when this is set; the worker reads the targets themselves from its own config.
   */
  notifyTargets?: number;
  /**
   * A provider quota that comes back later than this many minutes ends the goal as blocked instead
   * of a wait (config quota_wait_minutes); DEFAULT_QUOTA_WAIT_MINUTES when absent.
   */
  quotaWaitMinutes?: number;
  /**
   * A running goal with no step finished for this many minutes shows `stalled` and tells the notify
   * hooks (config stalled_after_minutes); DEFAULT_STALLED_AFTER_MINUTES when absent.
   */
  stalledAfterMinutes?: number;
  /** The runaway breaker's rules (config breaker.*); DEFAULT_BREAKER where absent. */
  breaker?: Partial<BreakerSettings>;
  /** The caps of the per-step snapshots (config snapshot_max_*_mib); the defaults where absent. */
  snapshots?: SnapshotLimits;
  /**
   * The checks a `finish` complete must pass (`--verify`, config `verify`, a project's additions):
   * absent for a goal without checks, which ends completed with `verified: false`.
   */
  verify?: VerifySettings;
  /** Set on a sub-agent: its parent and its depth (issue 27 §2). */
  agent?: AgentLink;
}

/** A steering message on its way to the model (spec F-CMDS): delivered at the next step boundary. */
export interface SteeringRequest {
  /** The sender's id for it: a second delivery with the same id is ignored. */
  id: string;
  text: string;
  /** Who said it, e.g. `alice@build-box`; shown in the transcript and the Web UI. */
  from: string;
}

/** A command the model asked to run outside the sandbox, waiting for `goalrun approve` or `deny`. */
export interface PendingApproval {
  toolCallId: string;
  command: string;
  justification: string;
  /** Workflow time of the request, in ms. */
  requestedAtMs: number;
  /** Workflow time after which the request is denied, in ms. */
  deadlineMs: number;
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
  /** A /pause is in effect: the goal waits at the next step boundary until /unpause. */
  paused: boolean;
  /** Steering messages received by signal, not yet delivered (they survive continue-as-new). */
  pendingSteering: SteeringRequest[];
  /** Ids of the latest delivered steering messages, so a message sent twice is delivered once. */
  steeringIds: string[];
  /** The escalation waiting for a human, if any. */
  approval: PendingApproval | null;
  /** Background jobs (spec S-JOBS). */
  jobs: JobRecord[];
  /** The tool call running now, named in the kept-progress summary if the goal is interrupted. */
  runningTool: string | null;
  /** Said once about the model (e.g. that it has no model card), shown by `status`. */
  modelNote: string | null;
  /** Requests waiting for the main loop (core/goal-inbox.ts); replaces pendingSteering from 0.2.0 on. */
  inbox: InboxRequest[];
  /** Requests that came by signal while the inbox was full, not yet reported. */
  droppedRequests: number;
  /**
   * What the tool host gathered for this execution (counts only; the rest is in the store), absent
   * for goals started before it did.
   */
  workspaceContext?: WorkspaceContextCounts;
  /** The result `finish` gave, matching the goal's output schema (`--output-schema`); absent without one. */
  finishResult?: unknown;
  /** The worst case of the model call in flight, held against the goal's caps until its usage settles it. */
  budgetReserved?: SpendAmount | null;
  /** What the runaway breaker counts (goals of the command queue). */
  breaker?: BreakerState;
  /** Why the goal pauses when it is not a person's /pause (e.g. a quota with no reset time). */
  pauseReason?: string | null;
  /**
   * What the per-step snapshots remember (the repository the goal started in, their bytes, why they
   * stopped); absent until the execution that records it, and in goals started before 0.3.0.
   */
  snapshots?: SnapshotState;
  /**
   * Since when (workflow time, ms) the goal waits at the store-wide daily budget (PATCH.waitsEnd):
   * carried over continue-as-new, so the wait's bound counts from its start; absent or null otherwise.
   */
  dailyWaitSinceMs?: number | null;
  /** Whether the goal runs on its primary or its backup model, and when it probes the primary (issue 27 §3). */
  failover?: FailoverState | null;
  /** What the goal's checks said at its finishes (patch verified-completion); absent until they first ran. */
  verification?: VerificationState;
  /**
   * The objective's parts as the model named them at its first finish with parts (issue 27 §1): a
   * later claim that leaves one out narrows the objective and is refused. Absent until then.
   */
  objectiveParts?: string[];
  /** The parts the last accepted finish claimed, shown beside its summary. */
  claimedParts?: string[];
  /** The sub-agents this goal started (issue 27 §2, patch sub-agents); absent until the first. */
  agents?: AgentRecord[];
  /** Which agent holds which task of the graph (task id → agent id), set by the agents' claims. */
  taskHolders?: Record<string, string>;
}

/** The fields added to GoalState after its first release, with their values for older states. */
const LATER_FIELDS: Pick<
  GoalState,
  | 'paused'
  | 'pendingSteering'
  | 'steeringIds'
  | 'approval'
  | 'jobs'
  | 'runningTool'
  | 'modelNote'
  | 'inbox'
  | 'droppedRequests'
> = {
  paused: false,
  pendingSteering: [],
  steeringIds: [],
  approval: null,
  jobs: [],
  runningTool: null,
  modelNote: null,
  inbox: [],
  droppedRequests: 0,
};

/** A state saved by an older goalrun, with the fields it lacks at their initial values. */
export function withLaterFields(
  state: Omit<GoalState, keyof typeof LATER_FIELDS> & Partial<GoalState>,
): GoalState {
  return { ...LATER_FIELDS, ...state } as GoalState;
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
    ...LATER_FIELDS,
  };
}

/** Adds a line to the recent-activity log, keeping only the newest few. */
export function noteAction(state: GoalState, text: string): GoalState {
  const actions = state.actions + 1;
  const line = clip(text, RECENT_ACTION_MAX_CHARS);
  const recent = [...state.recent, { n: actions, text: line }].slice(-RECENT_ACTIONS_KEPT);
  return { ...state, actions, recent };
}
