/**
 * The arguments of the tools the workflow handles (todo-write with its retired aliases, and finish),
 * validated where they enter: the model step parses them with their zod schemas and hands the
 * workflow the parsed form, or the problems with them.
 */
import { AGENT_ERROR_PREFIX, type ParsedAgent, parseAgentArgs } from './agent-args';
import { FINISH_ERROR_PREFIX, type ParsedFinish, parseFinishArgs } from './finish';
import { WORKFLOW_TOOL_ARGS_MAX_BYTES } from './limits';
import type { ParsedTodoWrite } from './task-graph-args';
import { parseTodoWriteArgs } from './todo-write-schema';
import { isTodoWriteCall, legacyCallToTodoWrite } from './todo-write-tool';
import { TOOL } from './tool-names';

/** A workflow tool call's arguments as validated, tagged with the tool that handles them. */
export type WorkflowToolArgs =
  | { tool: typeof TOOL.todoWrite; parsed: ParsedTodoWrite }
  | { tool: typeof TOOL.finish; parsed: ParsedFinish }
  | { tool: typeof TOOL.agent; parsed: ParsedAgent };

/**
 * Validates a workflow tool's raw arguments (an object, or its JSON text); a retired task tool's are
 * first mapped onto a todo-write call. Undefined for a tool the workflow does not handle.
 */
export function parseWorkflowToolArgs(toolName: string, input: unknown): WorkflowToolArgs | undefined {
  if (toolName === TOOL.finish) return { tool: TOOL.finish, parsed: parseFinishArgs(input) };
  if (toolName === TOOL.agent) return { tool: TOOL.agent, parsed: parseAgentArgs(input) };
  if (!isTodoWriteCall(toolName)) return undefined;
  return { tool: TOOL.todoWrite, parsed: parseTodoWriteArgs(legacyCallToTodoWrite(toolName, input)) };
}

/** The call refused for one problem, in the tool's own error form. */
function refused(toolName: string, problem: string): WorkflowToolArgs | undefined {
  if (toolName === TOOL.finish) {
    return { tool: TOOL.finish, parsed: { ok: false, error: `${FINISH_ERROR_PREFIX}: ${problem}` } };
  }
  if (toolName === TOOL.agent) {
    return { tool: TOOL.agent, parsed: { ok: false, error: `${AGENT_ERROR_PREFIX}: ${problem}` } };
  }
  return isTodoWriteCall(toolName)
    ? { tool: TOOL.todoWrite, parsed: { ok: false, errors: [problem] } }
    : undefined;
}

/** The first problems, up to the payload budget, then how many more there were. */
function boundedErrors(errors: string[]): string[] {
  const kept: string[] = [];
  let chars = 0;
  for (const error of errors) {
    // As it travels: quoted, escaped and separated from the next.
    chars += JSON.stringify(error).length + 1;
    if (chars > WORKFLOW_TOOL_ARGS_MAX_BYTES) {
      kept.push(`… and ${errors.length - kept.length} more problems`);
      break;
    }
    kept.push(error);
  }
  return kept;
}

/**
 * What the model step hands the workflow for a workflow tool call (undefined for other tools): the
 * validated arguments, kept within the size of a workflow payload. Arguments larger than
 * WORKFLOW_TOOL_ARGS_MAX_BYTES are refused unread; a list of problems that outgrows it (each quotes
 * a value) is cut short.
 */
export function workflowToolArgsFor(toolName: string, input: unknown): WorkflowToolArgs | undefined {
  const inputBytes = JSON.stringify(input ?? null).length;
  if (inputBytes > WORKFLOW_TOOL_ARGS_MAX_BYTES) {
    return refused(
      toolName,
      `arguments too large (${inputBytes} bytes, at most ${WORKFLOW_TOOL_ARGS_MAX_BYTES}); send fewer or shorter items`,
    );
  }
  const args = parseWorkflowToolArgs(toolName, input);
  if (args?.tool !== TOOL.todoWrite || args.parsed.ok) return args;
  return { tool: TOOL.todoWrite, parsed: { ok: false, errors: boundedErrors(args.parsed.errors) } };
}
