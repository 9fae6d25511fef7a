/**
 * Tools handled inside the workflow on its durable state: `finish` and `todo-write` (with its
 * legacy aliases). Pure: the workflow stores the returned text as the call's result. Their
 * arguments arrive validated by the model step (workflow-tool-args.ts); only types come from the
 * modules with zod schemas, which workflow code loads solely for calls recorded before that.
 */

import type { ParsedFinish } from './finish';
import type { GoalState, GoalStatus } from './goal';
import { recordToolOutcome } from './goal-rules';
import { FINISH_SUMMARY_MAX_CHARS } from './limits';
import { applyTodoWrite, summarizeTaskList } from './task-graph';
import type { ParsedTodoWrite } from './task-graph-args';
import { clip } from './text';
import { isTodoWriteCall, PLAN_ONLY_NUDGE } from './todo-write-tool';
import { TOOL } from './tool-names';
import type { WorkflowToolArgs } from './workflow-tool-args';

/** A call the workflow handles itself. */
export interface WorkflowToolCall {
  toolCallId: string;
  toolName: string;
  /** The arguments as the model step validated them. */
  args?: WorkflowToolArgs;
  /** The raw arguments, in model-step results recorded before the model step validated them. */
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

/**
 * The arguments of a call whose model step passed none (a step recorded before the model step
 * validated them): the call is refused with a reason the model can act on, by calling it again.
 */
export function unvalidatedWorkflowToolArgs(call: WorkflowToolCall): WorkflowToolArgs {
  const problem =
    'the arguments of this call were not checked by this version of goalrun; send the call again';
  return call.toolName === TOOL.finish
    ? { tool: TOOL.finish, parsed: { ok: false, error: `${TOOL.finish}: ${problem}` } }
    : { tool: TOOL.todoWrite, parsed: { ok: false, errors: [problem] } };
}

/** Handles one workflow tool call on the goal state, given its validated arguments. */
export function handleWorkflowTool(
  state: GoalState,
  call: WorkflowToolCall,
  args: WorkflowToolArgs,
  options: { subAgent?: boolean } = {},
): WorkflowToolOutcome {
  if (args.tool === TOOL.finish) return handleFinish(state, args.parsed);
  // Agent calls start child workflows (workflows/agent-tool.ts); none reaches here.
  if (args.tool === TOOL.agent)
    return { state, ok: false, text: `${TOOL.agent} is not available to this goal` };
  return handleTodoWrite(state, call.toolName, args.parsed, options.subAgent === true);
}

function handleFinish(state: GoalState, parsed: ParsedFinish): WorkflowToolOutcome {
  if (!parsed.ok) {
    const next = recordToolOutcome(state, {
      toolName: TOOL.finish,
      summary: `${TOOL.finish}: invalid arguments`,
      ok: false,
      changedWorkspace: false,
    });
    return { state: next, ok: false, text: parsed.error };
  }
  const { status } = parsed.args;
  // The whole call stays in the transcript; the state keeps what status and the stream show.
  const summary = clip(parsed.args.summary, FINISH_SUMMARY_MAX_CHARS);
  const next = recordToolOutcome(state, {
    toolName: TOOL.finish,
    summary: `${TOOL.finish}: ${status}`,
    ok: true,
    changedWorkspace: false,
  });
  return {
    // The result is there only for goals with an output schema, checked against it at the model step.
    state: {
      ...next,
      finishSummary: summary,
      ...(parsed.args.result !== undefined ? { finishResult: parsed.args.result } : {}),
    },
    ok: true,
    text: `goal marked ${status}`,
    finished:
      status === 'complete' ? { status: 'completed', reason: null } : { status: 'blocked', reason: summary },
  };
}

/** A todo-write call, or a call of one of its retired aliases (toolName) mapped onto one. */
function handleTodoWrite(
  state: GoalState,
  toolName: string,
  parsed: ParsedTodoWrite,
  subAgent: boolean,
): WorkflowToolOutcome {
  const outcome = applyTodoWrite(state.tasks, parsed, { subAgent });
  const summary = `${TOOL.todoWrite}: ${outcome.ok ? summarizeTaskList(outcome.view) : 'rejected'}`;
  const next = recordToolOutcome(
    { ...state, tasks: outcome.graph },
    { toolName, summary, ok: outcome.ok, changedWorkspace: false },
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
