/**
 * Tools handled inside the workflow on its durable state: `finish` and `todo-write` (with its
 * legacy aliases). Pure: the workflow stores the returned text as the call's result.
 */
import { parseFinishArgs } from './finish';
import type { GoalState, GoalStatus } from './goal';
import { recordToolOutcome } from './goal-rules';
import { applyTodoWrite, summarizeTaskList } from './task-graph';
import { isTodoWriteCall, legacyCallToTodoWrite, PLAN_ONLY_NUDGE } from './todo-write-tool';
import { TOOL } from './tool-names';

/** A call the workflow handles itself. */
export interface WorkflowToolCall {
  toolCallId: string;
  toolName: string;
  input?: unknown;
}

/** What a workflow tool call did. */
export interface WorkflowToolOutcome {
  state: GoalState;
  ok: boolean;
  /** The result text the model sees. */
  text: string;
  /** Set when the call ends the goal. */
  finished?: { status: GoalStatus; reason: string | null };
}

/** Whether the workflow handles this tool itself. */
export function isWorkflowTool(toolName: string): boolean {
  return toolName === TOOL.finish || isTodoWriteCall(toolName);
}

/** Handles one workflow tool call on the goal state. */
export function handleWorkflowTool(state: GoalState, call: WorkflowToolCall): WorkflowToolOutcome {
  if (call.toolName === TOOL.finish) return handleFinish(state, call);
  return handleTodoWrite(state, call);
}

function handleFinish(state: GoalState, call: WorkflowToolCall): WorkflowToolOutcome {
  const parsed = parseFinishArgs(call.input);
  if (!parsed.ok) {
    const next = recordToolOutcome(state, {
      toolName: TOOL.finish,
      summary: `${TOOL.finish}: invalid arguments`,
      ok: false,
      changedWorkspace: false,
    });
    return { state: next, ok: false, text: parsed.error };
  }
  const { status, summary } = parsed.args;
  const next = recordToolOutcome(state, {
    toolName: TOOL.finish,
    summary: `${TOOL.finish}: ${status}`,
    ok: true,
    changedWorkspace: false,
  });
  return {
    state: { ...next, finishSummary: summary },
    ok: true,
    text: `goal marked ${status}`,
    finished:
      status === 'complete' ? { status: 'completed', reason: null } : { status: 'blocked', reason: summary },
  };
}

function handleTodoWrite(state: GoalState, call: WorkflowToolCall): WorkflowToolOutcome {
  const args =
    call.toolName === TOOL.todoWrite ? call.input : legacyCallToTodoWrite(call.toolName, call.input);
  const outcome = applyTodoWrite(state.tasks, args, { subAgent: false });
  const summary = `${TOOL.todoWrite}: ${outcome.ok ? summarizeTaskList(outcome.view) : 'rejected'}`;
  const next = recordToolOutcome(
    { ...state, tasks: outcome.graph },
    { toolName: call.toolName, summary, ok: outcome.ok, changedWorkspace: false },
  );
  return { state: next, ok: outcome.ok, text: outcome.result };
}

/**
 * Adds the one-line nudge to the first step of a turn whose calls were all successful todo-write
 * calls (spec S-TASKS); later such steps in the same turn get nothing extra.
 */
export function planOnlyNudge(
  state: GoalState,
  calls: Array<{ toolName: string; ok: boolean }>,
): { state: GoalState; nudge: string | null } {
  const planOnly = calls.length > 0 && calls.every((call) => isTodoWriteCall(call.toolName) && call.ok);
  if (!planOnly || state.planNudged) return { state, nudge: null };
  return { state: { ...state, planNudged: true }, nudge: PLAN_ONLY_NUDGE };
}
