/**
 * Inputs and results of goalrun's activities. These shapes are durable contracts (they are in the
 * history of running goals): add optional fields, never rename or remove one.
 * Everything here is small: references to store rows, never message bodies or tool outputs.
 */

import type { ContextPlan } from '../core/context-plan';
import type { FailoverRule } from '../core/failover';
import type { GoalDefinition, GoalState, GoalStatus } from '../core/goal';
import type { LedgerEntry } from '../core/ledger';
import type { MessageMeta, StoredMessage } from '../core/messages';
import type { BilledAttempts, CallPricing } from '../core/paid-calls';
import type { SandboxSettings } from '../core/sandbox-settings';
import type { StateWrite } from '../core/state-write';
import type { ToolRules } from '../core/tool-rules';
import type { RequestUsage } from '../core/usage';
import type { WorkflowToolArgs } from '../core/workflow-tool-args';
import type { StoreEvent } from '../store/types';
import type { ModelBudget, ModelBudgetInput } from './model-budget';

/** Input of `openSession`. */
export interface OpenSessionInput {
  goal: GoalDefinition;
  workflowId: string;
  /** The initial state, saved as the session's first checkpoint. */
  state?: StateWrite;
  /**
   * Set when the tool host gathered this execution's workspace context first: the first message
   * takes its environment snapshot from there, and nothing here touches the workspace.
   */
  workspaceContext?: { execution: number };
  /**
   * A new goal of PATCH.openInOneCall: its model budget is resolved here too, and the store's daily
   * cap read, so the goal starts with this one local activity instead of three.
   */
  budget?: ModelBudgetInput;
  /** Also read the store-wide daily cap (set with the budget). */
  dailyCap?: boolean;
}

/** Result of `openSession`: the first message (objective plus environment snapshot). */
export interface OpenSessionResult {
  first: LedgerEntry;
  /** The model budget, when the input asked for it. */
  budget?: ModelBudget;
  /** The store-wide daily cap in USD (null: none is set), when the input asked for it. */
  dailyCapUsd?: number | null;
}

/** Input of `modelStep`. */
export interface ModelStepInput {
  sessionId: string;
  /** 1-based step number over the whole goal; with the execution, the idempotency key of the stored answer. */
  stepNumber: number;
  /** The session's execution number (1 for the first run, +1 per resume); absent means 1. */
  execution?: number;
  model: string;
  baseUrl?: string;
  /** The variable of an `openai-compatible` endpoint's key (the goal's `--api-key-env`). */
  apiKeyEnv?: string;
  /** Transcript messages up to and including this sequence number form the context. */
  upToSeq: number;
  /** Which of those messages the model sees, and how (after compaction); all of them when absent. */
  plan?: ContextPlan;
  /** Names of the tools offered to the model. */
  tools: string[];
  /** The goal state as of this step's start, saved with the answer (only what changed). */
  state?: StateWrite;
  /** A provider unreachable this long (minutes) fails the step for good instead of retrying. */
  providerUnreachableMinutes?: number;
  /**
   * Set by goals whose workflow waits out an exhausted quota (status waiting_quota, goals of the
   * command queue): the step then ends with a non-retryable QuotaExhausted. Goals of 0.1.0 do not
   * set it and get the retryable provider failure their workflow knows.
   */
  waitsOutQuota?: boolean;
  /** A provider stream silent this long (seconds) is retried as stalled; the default when absent. */
  streamIdleTimeoutS?: number;
  /**
   * How the step's calls are priced in the daily ledger, and the worst case an attempt billed without
   * reported usage counts at (core/paid-calls.ts); absent: recorded at no cost.
   */
  pricing?: CallPricing;
  /**
   * When the step gives up on its model for the goal's backup (issue 27 §3): set by the workflow
   * only while the goal has a backup to go to; the step then ends with a non-retryable ProviderOutage.
   */
  failover?: FailoverRule;
  /**
   * A sub-agent's last turn at its share of the budget (issue 27 §2): no tools are offered, and the
   * result carries the answer's text (clipped) as what the agent hands back.
   */
  handBack?: boolean;
}

/** A tool call as the workflow sees it: a reference, with the arguments inline only when small. */
export interface ToolCallRef {
  toolCallId: string;
  toolName: string;
  /** A workflow tool's arguments (todo-write and its aliases, finish), validated by the model step. */
  args?: WorkflowToolArgs;
  /**
   * A workflow tool's raw arguments, in results recorded before the model step validated them (a
   * goal in flight across that upgrade replays them). Other tools' arguments stay in the store.
   */
  input?: unknown;
  /** One line for the Web UI and the log, e.g. `bash: npm test`. */
  summary: string;
  /** What the workflow must know to route the call: background jobs, escalations out of the sandbox. */
  routing?: import('./tools/routing').ToolCallRouting;
}

/** Routing facts of a tool call, read from its arguments by the model step (activities/tools/routing.ts). */
export type { ToolCallRouting as ToolRouting } from './tools/routing';

/** Result of `modelStep`. */
export interface ModelStepResult {
  entry: LedgerEntry;
  toolCalls: ToolCallRef[];
  usage: RequestUsage;
  finishReason: string;
  /** The first line of the model's text, for the log. */
  textPreview: string;
  /** The whole text (clipped), only for a hand-back step (input handBack). */
  text?: string;
  /** Estimated tokens of the system prompt and tool schemas: pressure no compaction relieves. */
  fixedTokens?: number;
  /** Set when the step needed more than one attempt: how many, and the last error. */
  retried?: { attempts: number; lastError: string };
  /** Attempts before this answer that the provider billed without an answer the goal used (priced). */
  billed?: BilledAttempts;
}

/** Input of `runTool`. */
export interface RunToolInput {
  sessionId: string;
  stepNumber: number;
  toolCallId: string;
  toolName: string;
  workspace: string;
  /** Key of the assistant message that made the call; absent means the first execution's step key. */
  assistantKey?: string;
  /** The goal's sandbox; DEFAULT_SANDBOX when absent. */
  sandbox?: SandboxSettings;
  /** A human approved running this one call outside the sandbox. */
  escalationApproved?: boolean;
  /** For `bash` with run_in_background: the job id the workflow assigned. */
  jobId?: string;
  /** The goal's --allowed-tools / --disallowed-tools, checked before the call runs. */
  toolRules?: ToolRules;
}

/** Result of `runTool`. */
export interface RunToolResult {
  entry: LedgerEntry;
  ok: boolean;
  changedWorkspace: boolean;
  firstLine: string;
  lastLine: string;
  /** A short hash of the tool name and arguments, and one of the output (the runaway breaker compares them). */
  callDigest?: string;
  outputDigest?: string;
  /** The call waited on purpose (core/waiting-call.ts): the breaker allows it more repeats. */
  waited?: true;
  /** A background job this call started. */
  job?: { jobId: string; command: string; processQueue: string; pid?: number };
  /** Jobs a job-kill call killed. */
  killedJobs?: string[];
  /**
   * Whether the tool host holds anything of the session after the call (a private /tmp, a job, a
   * server) that the goal's end must remove. Absent from older tool hosts: then it may.
   */
  leftOnHost?: boolean;
}

/** Input of `appendMessage`: a message the workflow itself writes (continuations, workflow-tool results). */
export interface AppendMessageInput {
  sessionId: string;
  key: string;
  message: StoredMessage;
  meta?: MessageMeta;
  /** The goal state that accounts for this message, saved in the same transaction. */
  state?: StateWrite;
  event?: StoreEvent | StoreEvent[];
}

/** Input of `saveState`: a change to the saved goal state, with an event in the same transaction. */
export interface SaveStateInput {
  sessionId: string;
  state: StateWrite;
  event?: { kind: string; data: unknown; key?: string };
}

/** Result of `prepareResume`: what a resumed execution starts from. */
export interface PrepareResumeResult {
  /** The saved state, with counters brought up to date with the transcript. */
  state: GoalState;
  keptProgress: string | null;
  /** This execution's number: one more than any execution the store has seen. */
  execution: number;
  /** Tool calls with no result (interrupted work). */
  unansweredToolCalls: Array<{ toolCallId: string; toolName: string }>;
  /** Model steps found in the transcript after the saved state (a run killed from outside). */
  stepsRecovered: number;
}

/** Input of `recordEvent`. */
export interface RecordEventInput {
  sessionId: string;
  kind: string;
  data: unknown;
  key?: string;
}

/** Final status written to the session row. */
export interface FinalStatus {
  status: GoalStatus;
  reason: string | null;
}

/** Input of `killSessionJobs`: every background job of the session on the tool host that runs it. */
export interface KillSessionJobsInput {
  sessionId: string;
}

/** The job activities a tool host's process registers on its own task queue. */
export interface JobHostActivities {
  killSessionJobs(input: KillSessionJobsInput): Promise<{ killed: string[] }>;
}
