/**
 * Keys of the store rows goalrun writes, in one place. Every write is keyed, so an activity retried
 * after a crash finds its earlier row instead of writing a second one. Keys built from workflow
 * counters (steps, iterations, notices) carry the execution number: a resumed execution never
 * reuses, or collides with, the rows of an execution that died before its last checkpoint.
 */

/** Key of the first message (objective and environment snapshot). */
export const FIRST_MESSAGE_KEY = 'initial';

/** Key of the event that says the session was opened (stored with the first message). */
export const SESSION_OPENED_EVENT_KEY = 'opened';

/** Prefixes of message keys; the ledger reads who wrote a user message from them. */
export const KEY_PREFIX = {
  assistant: 'step:',
  toolResult: 'result:',
  continuation: 'continue:',
  resume: 'resume:',
  notice: 'notice:',
  summary: 'summary:',
  steering: 'steer:',
} as const;

/** Key builders for messages, events and spool rows. */
export const storeKeys = {
  // --- Messages ---
  /** The assistant message of a model step. */
  assistant: (execution: number, step: number) => `${KEY_PREFIX.assistant}${step}@${execution}`,
  /** The result of a tool call (tool-call ids are unique within a session; see model-step). */
  toolResult: (toolCallId: string) => `${KEY_PREFIX.toolResult}${toolCallId}`,
  /** The continuation message that starts an iteration. */
  continuation: (execution: number, iteration: number) =>
    `${KEY_PREFIX.continuation}${iteration}@${execution}`,
  /** The message a resumed execution adds before its first step. */
  resume: (execution: number) => `${KEY_PREFIX.resume}${execution}`,
  /** A one-line goalrun notice (compaction, failure budget, a command's note), numbered per session. */
  notice: (execution: number, n: number) => `${KEY_PREFIX.notice}${n}@${execution}`,
  /** The n-th summary of the session (summaries are numbered over the whole session). */
  summary: (n: number) => `${KEY_PREFIX.summary}${n}`,
  /**
   * The n-th summary made again for another span, after an attempt whose result the workflow never saw
   * stored one for a different span (that one is kept, unused).
   */
  summaryForSpan: (n: number, fromSeq: number, toSeq: number) =>
    `${KEY_PREFIX.summary}${n}~${fromSeq}-${toSeq}`,
  /** A steering message, by the id its sender gave it. */
  steering: (id: string) => `${KEY_PREFIX.steering}${id}`,
  /** The id of the steering message `resume --message` gives a resumed execution (its key: steering(id)). */
  resumeSteeringId: (execution: number) => `resume-${execution}`,

  // --- Events ---
  /** An execution resumed the session (stored with its resume message). */
  sessionResumedEvent: (execution: number) => `resumed@${execution}`,
  /** The tool event of a call (stored with its result). */
  toolEvent: (toolCallId: string) => `tool:${toolCallId}`,
  /** The task list after a `todo-write` call changed it. */
  taskUpdateEvent: (toolCallId: string) => `tasks:${toolCallId}`,
  /** A model step's usage (stored with its assistant message). */
  usageEvent: (execution: number, step: number) => `usage:${step}@${execution}`,
  /** A model step started (first attempt only; a retry finds it). */
  stepStartEvent: (execution: number, step: number) => `step-start:${step}@${execution}`,
  /** A failed attempt of a model step, so the next attempt can say why it was retried. */
  modelErrorEvent: (execution: number, step: number, attempt: number) =>
    `model-error:${step}@${execution}#${attempt}`,
  /** The summarizer's usage for the n-th summary. */
  summaryUsageEvent: (n: number) => `summary-usage:${n}`,
  /** The decision on an escalation out of the sandbox. */
  approvalEvent: (toolCallId: string) => `approval:${toolCallId}`,
  /** An escalation out of the sandbox waits for a human. */
  approvalRequestedEvent: (toolCallId: string) => `approval:${toolCallId}:requested`,
  /** An app command a person sent (`/pause`, `/limits`, …), by its request id. */
  commandEvent: (requestId: string) => `command:${requestId}`,
  /** The kept-progress summary a cancelled execution saves. */
  keptProgressEvent: (execution: number) => `kept-progress@${execution}`,
  /** The goal of this execution ended. */
  goalEnded: (execution: number) => `end:${execution}`,
  /** A notice of the workspace context an execution gathered (a cap applied, a server that failed). */
  contextNoticeEvent: (execution: number, index: number) => `context-notice:${execution}:${index}`,
  /** A nested directory's instruction file was shown to the model (once per session). */
  nestedInstructionsEvent: (label: string) => `nested-instructions:${label}`,
  /** One hook's run: pre_tool/post_tool/stop by the tool call, notify by the status change. */
  hookEvent: (event: string, subject: string, index: number) => `hook:${event}:${subject}:${index}`,
  /** A notification (config `notify`) of a status change: one id per change, the same on every retry. */
  notificationDelivery: (workflowId: string, execution: number, actions: number, status: string) =>
    `notify:${workflowId}:${execution}:${actions}:${status}`,
  /** A notification that never reached one target. */
  notificationUndeliveredEvent: (deliveryId: string, index: number) => `${deliveryId}:${index}:undelivered`,

  // --- Spool ---
  /** The spooled output of a tool call. */
  spool: (toolCallId: string) => toolCallId,
  /** A spool row written beside one an older store left without its message (`stamp` makes it new). */
  spoolBeside: (toolCallId: string, stamp: string) => `${toolCallId}@${stamp}`,
  /** A binary part (an image) of an MCP tool's result, spooled apart from the text. */
  spoolPart: (toolCallId: string, index: number) => `${toolCallId}:part:${index}`,
};

/** The execution number in a key (`step:7@2` → 2, `resume:3` → 3), or 1 for keys of no execution. */
export function executionOfKey(key: string): number {
  if (key.startsWith(KEY_PREFIX.resume)) return positive(Number(key.slice(KEY_PREFIX.resume.length)));
  const at = key.lastIndexOf('@');
  if (at < 0) return 1;
  return positive(Number(key.slice(at + 1)));
}

function positive(n: number): number {
  return Number.isInteger(n) && n > 0 ? n : 1;
}

/**
 * The ledger keys of paid calls (store/paid-calls.ts), unique within a session. An activity's attempts
 * are told apart by the activity's identity in its workflow run (`instance`: run id / activity id,
 * what both the activity and the workflow that scheduled it know), so a step run again after a pause
 * or an overflow never shares its keys with the earlier run of it.
 */
export const paidCallKeys = {
  /** The answer of a model step, stored under `assistantKey`: one per step, however many attempts. */
  answer: (assistantKey: string) => `answer:${assistantKey}`,
  /** An attempt of a model step billed without an answer the goal used. */
  attempt: (instance: string, attempt: number) => `retry:${instance}:${attempt}`,
  /** The prefix of every billed attempt of one model-step activity. */
  attempts: (instance: string) => `retry:${instance}:`,
  /** The n-th request of one summarize activity. */
  summary: (instance: string, request: number) => `summary:${instance}:${request}`,
  /** The prefix of every request of one summarize activity. */
  summaries: (instance: string) => `summary:${instance}:`,
} as const;
