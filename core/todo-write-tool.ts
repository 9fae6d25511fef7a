/**
 * The `todo-write` tool's retired aliases and how they map onto it, and the nudge after a step spent
 * only on the plan (spec S-TASKS). Workflow code uses these, so this is plain code without zod; what
 * the model is shown, and how a call is validated, is in todo-write-schema.ts.
 */
import { LEGACY_TASK_TOOL_NAMES, LEGACY_TOOL, TOOL } from './tool-names';

/** Retired tool names that still work, each mapped onto a todo-write call. */
export const LEGACY_TASK_TOOL_ALIASES = LEGACY_TASK_TOOL_NAMES;

/** One of the retired tool names. */
export type LegacyTaskToolName = (typeof LEGACY_TASK_TOOL_ALIASES)[number];

/** The line after the first step of a turn whose calls were all successful todo-write calls. */
export const PLAN_ONLY_NUDGE =
  'Plan updated. Continue with the next concrete action in the same response next time.';

/** Whether a tool name is todo-write or one of its retired aliases. */
export function isTodoWriteCall(toolName: string): boolean {
  return toolName === TOOL.todoWrite || (LEGACY_TASK_TOOL_ALIASES as readonly string[]).includes(toolName);
}

/**
 * Whether a step's calls earn the plan-only nudge: at least one call, and every call a successful
 * todo-write (or alias) call. Whether it is the first such step of the turn is the caller's to track.
 */
export function isPlanOnlyStep(calls: { toolName: string; ok: boolean }[]): boolean {
  return calls.length > 0 && calls.every((call) => call.ok && isTodoWriteCall(call.toolName));
}

/** Fields a legacy call carries over to the task it writes. */
const TASK_FIELDS = ['id', 'content', 'status', 'dependencies'] as const;

function decode(args: unknown): unknown {
  if (typeof args !== 'string') return args;
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

function pickTask(record: Record<string, unknown>): Record<string, unknown> {
  const task: Record<string, unknown> = {};
  for (const field of TASK_FIELDS) if (record[field] !== undefined) task[field] = record[field];
  return task;
}

/**
 * Maps a call of a retired task tool onto todo-write arguments, to be validated by parseTodoWriteArgs:
 * task-create inserts one task and task-update updates one (both as a merge), task-get and
 * task-list only read (every call returns the full list anyway), task-delete deletes `id` or `ids`.
 * Arguments that cannot be mapped are passed through so that todo-write's own validation reports
 * them with the field at fault; a task-update or task-delete without an id maps to an empty id for
 * the same reason, rather than to an insert or a read. Names that are not aliases pass through.
 */
export function legacyCallToTodoWrite(toolName: string, args: unknown): unknown {
  if (!(LEGACY_TASK_TOOL_ALIASES as readonly string[]).includes(toolName)) return args;
  const name = toolName as LegacyTaskToolName;
  if (name === LEGACY_TOOL.taskGet || name === LEGACY_TOOL.taskList) return {};
  const value = decode(args);
  const record =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  if (record === undefined) return value;
  if (name === LEGACY_TOOL.taskDelete) {
    if (record.ids !== undefined) return { delete: record.ids };
    return { delete: [record.id ?? ''] };
  }
  const task = pickTask(record);
  if (name === LEGACY_TOOL.taskUpdate && task.id === undefined) task.id = '';
  return { todos: [task], merge: true };
}
