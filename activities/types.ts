/**
 * Inputs and results of goalrun's activities. These shapes are durable contracts (they are in the
 * history of running goals): add optional fields, never rename or remove one.
 * Everything here is small: references to store rows, never message bodies or tool outputs.
 */
import type { ContextPlan } from '../core/context-plan';
import type { GoalDefinition, GoalState, GoalStatus } from '../core/goal';
import type { LedgerEntry } from '../core/ledger';
import type { StoredMessage } from '../core/messages';
import type { RequestUsage } from '../core/usage';

/** Input of `openSession`. */
export interface OpenSessionInput {
  goal: GoalDefinition;
  workflowId: string;
}

/** Result of `openSession`: the first message (objective plus environment snapshot). */
export interface OpenSessionResult {
  first: LedgerEntry;
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
  /** Transcript messages up to and including this sequence number form the context. */
  upToSeq: number;
  /** Which of those messages the model sees, and how (after compaction); all of them when absent. */
  plan?: ContextPlan;
  /** Names of the tools offered to the model. */
  tools: string[];
}

/** A tool call as the workflow sees it: a reference, with the arguments inline only when small. */
export interface ToolCallRef {
  toolCallId: string;
  toolName: string;
  /** Parsed arguments when they are small; otherwise the tool activity reads them from the store. */
  input?: unknown;
  /** One line for the Web UI and the log, e.g. `bash: npm test`. */
  summary: string;
}

/** Result of `modelStep`. */
export interface ModelStepResult {
  entry: LedgerEntry;
  toolCalls: ToolCallRef[];
  usage: RequestUsage;
  finishReason: string;
  /** The first line of the model's text, for the log. */
  textPreview: string;
  /** Estimated tokens of the system prompt and tool schemas: pressure no compaction relieves. */
  fixedTokens?: number;
  /** Set when the step needed more than one attempt: how many, and the last error. */
  retried?: { attempts: number; lastError: string };
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
}

/** Result of `runTool`. */
export interface RunToolResult {
  entry: LedgerEntry;
  ok: boolean;
  changedWorkspace: boolean;
  firstLine: string;
  lastLine: string;
}

/** Input of `appendMessage`: a message the workflow itself writes (continuations, workflow-tool results). */
export interface AppendMessageInput {
  sessionId: string;
  key: string;
  message: StoredMessage;
}

/** Input of `saveCheckpoint`. The ledger is left out: it is rebuilt from the transcript on resume. */
export interface SaveCheckpointInput {
  sessionId: string;
  state: Omit<GoalState, 'ledger'>;
  tasks: unknown;
  /** Kept-progress summary, saved when the goal is interrupted. */
  keptProgress?: string;
  event?: { kind: string; data: unknown; key?: string };
}

/** Result of `loadCheckpoint`: what a resumed execution starts from. */
export interface LoadCheckpointResult {
  state: GoalState;
  tasks: unknown;
  keptProgress: string | null;
  /** Tool calls of the last assistant message that have no result (interrupted work). */
  unansweredToolCalls: Array<{ toolCallId: string; toolName: string }>;
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
