/**
 * The result of a tool call the workflow answers itself (workflow tools, refusals, denials, calls
 * that could not run), stored as the tool message with its event for the stream.
 */
import type { ToolCallRef } from '../activities/types';
import { EVENT_KINDS } from '../core/event-kinds';
import { storeKeys } from '../core/store-keys';
import { taskView } from '../core/task-graph';
import { clipHead } from '../core/text';
import type { GoalRun } from './goal-run-port';

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
  const key = storeKeys.toolResult(call.toolCallId);
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
  await run.appendMessage(
    key,
    {
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
    { event: events },
  );
  run.unanswered = run.unanswered.filter((pending) => pending.toolCallId !== call.toolCallId);
}

/** UTF-8 bytes of the result text, as the tool event reports them. */
function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}
