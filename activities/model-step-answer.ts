/**
 * Storing a model step's answer: the assistant message, its usage and the state the step started from
 * in one write with its usage event, and the answer's row in the daily ledger beside it (issue 24
 * item 4). Idempotent, so the step can wait a store outage out by running it again (store-outage.ts).
 */
import { EVENT_KINDS } from '../core/event-kinds';
import type { WorkspaceContextData } from '../core/extensions/workspace-context';
import type { MessageMeta, StoredMessage, ToolCallPart, TranscriptEntry } from '../core/messages';
import { storeKeys } from '../core/store-keys';
import { clipBytes } from '../core/stream-events';
import type { SessionStore } from '../store/types';
import { summaryOf } from './model-step-result';
import type { AttemptMeter } from './paid-attempts';
import type { ModelResponse } from './providers/types';
import type { ModelStepInput } from './types';
import { uniqueToolCalls } from './unique-tool-calls';

/** The most of a step's text the event log keeps for the stream (the message itself is whole). */
const STEP_TEXT_MAX_BYTES = 16 * 1024;

/** Where an answer goes, and who received it. */
export interface AnswerContext {
  store: SessionStore;
  input: ModelStepInput;
  execution: number;
  assistantKey: string;
  /** The ledger key of this attempt (core/paid-calls.ts). */
  attemptKey: string;
  /** The ledger key of the attempt that received the answer (an earlier one when it was kept). */
  answerKey: string;
  workspaceContext: WorkspaceContextData | null;
  meter: AttemptMeter;
}

/** Stores the answer once under the step's key; returns the stored entry (another attempt's, if it won). */
export async function storeModelAnswer(
  context: AnswerContext,
  answer: ModelResponse,
): Promise<{ entry: TranscriptEntry; meta: MessageMeta; toolCalls: ToolCallPart[] }> {
  const { store, input, execution, assistantKey, attemptKey, answerKey, workspaceContext, meter } = context;
  const toolCalls = await uniqueToolCalls(store, input.sessionId, answer.toolCalls);
  const message: StoredMessage = {
    role: 'assistant',
    content: [...(answer.text ? [{ type: 'text' as const, text: answer.text }] : []), ...toolCalls],
  };
  const meta: MessageMeta = {
    usage: answer.usage,
    finishReason: answer.finishReason,
    model: input.model,
    attemptKey: answerKey,
  };
  // The answer, its usage, the state this step started from and its ledger row commit together.
  const { seq, created } = await store.appendMessage(input.sessionId, assistantKey, message, {
    meta,
    state: input.state,
    paidCall: meter.answerCall(assistantKey, answer.usage),
    event: {
      kind: EVENT_KINDS.modelUsage,
      data: {
        step: input.stepNumber,
        model: input.model,
        usage: answer.usage,
        finishReason: answer.finishReason,
        // What the stream shows of the step: its text and its calls (arguments cut short).
        text: clipBytes(answer.text ?? '', STEP_TEXT_MAX_BYTES).text,
        toolCalls: toolCalls.map((call) => ({
          id: call.toolCallId,
          name: call.toolName,
          summary: summaryOf(call, workspaceContext),
          arguments: clipBytes(JSON.stringify(call.input ?? null)).text,
        })),
      },
      key: storeKeys.usageEvent(execution, input.stepNumber),
    },
  });
  // Another attempt may have stored its answer first: then that one is the answer.
  const entry = (created ? null : await store.getMessageByKey(input.sessionId, assistantKey)) ?? {
    seq,
    key: assistantKey,
    message,
    meta,
  };
  // Stored: the attempt that received it is not a billed retry (it may have recorded itself one).
  const receivedBy = created ? answerKey : entry.meta?.attemptKey;
  if (receivedBy !== attemptKey) await meter.answeredBy(receivedBy);
  return { entry, meta, toolCalls };
}
