/**
 * The result of a tool call the workflow answers itself (workflow tools, refusals, denials, calls
 * that could not run), stored as the tool message with its event for the stream.
 */
import type { ToolCallRef } from '../activities/types';
import { EVENT_KINDS } from '../core/event-kinds';
import { storeKeys } from '../core/store-keys';
import { taskView } from '../core/task-graph';
import { clipHead } from '../core/text';
import type { GoalRun, ToolAnswer } from './goal-run-port';

/**
 * Stores the result of a call the workflow answers itself, with its event for the stream (and the
 * task list when the call changed it).
 */
export async function answerToolCall(
  run: GoalRun,
  call: ToolCallRef,
  text: string,
  ok: boolean,
  tasksChanged = false,
): Promise<void> {
  const answer = toolAnswerOf(run, call, text, ok, tasksChanged);
  await run.appendMessage(answer.key, answer.message, { event: answer.events });
  run.unanswered = run.unanswered.filter((pending) => pending.toolCallId !== call.toolCallId);
}

/**
 * Holds the answer of the `finish` that ends the goal, for the goal-ended checkpoint to store in the
 * same local activity (PATCH.finishAnsweredAtEnd): the call counts as answered from here on.
 */
export function holdAnswerForEnd(
  run: GoalRun,
  call: ToolCallRef,
  text: string,
  ok: boolean,
  tasksChanged = false,
): void {
  run.heldAnswer = toolAnswerOf(run, call, text, ok, tasksChanged);
  run.unanswered = run.unanswered.filter((pending) => pending.toolCallId !== call.toolCallId);
}

/** The tool message and stream events of a call the workflow answers itself. */
function toolAnswerOf(
  run: GoalRun,
  call: ToolCallRef,
  text: string,
  ok: boolean,
  tasksChanged: boolean,
): ToolAnswer {
  const toolEvent = {
    kind: EVENT_KINDS.tool,
    data: {
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      ok,
      bytes: utf8Bytes(text),
      head: clipHead(text, 2048),
    },
    key: storeKeys.toolEvent(call.toolCallId),
  };
  const events = tasksChanged
    ? [
        toolEvent,
        {
          kind: EVENT_KINDS.taskUpdate,
          data: { tasks: taskView(run.state.tasks) },
          key: storeKeys.taskUpdateEvent(call.toolCallId),
        },
      ]
    : toolEvent;
  return {
    key: storeKeys.toolResult(call.toolCallId),
    message: {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output: ok ? { type: 'text', value: text } : { type: 'error-text', value: text },
        },
      ],
    },
    events,
  };
}

/** UTF-8 bytes of the result text, as the tool event reports them. */
function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}
