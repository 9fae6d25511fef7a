/**
 * The `todo-write` tool as the model sees it, its retired aliases, and the nudge after a step spent
 * only on the plan (spec S-TASKS). Handled in the workflow on its durable state, so it is plain code.
 */
import { TASK_STATUSES } from './task-graph-types';
import { LEGACY_TASK_TOOL_NAMES, LEGACY_TOOL, TOOL } from './tool-names';

/** Retired tool names that still work, each mapped onto a todo-write call. */
export const LEGACY_TASK_TOOL_ALIASES = LEGACY_TASK_TOOL_NAMES;

/** One of the retired tool names. */
export type LegacyTaskToolName = (typeof LEGACY_TASK_TOOL_ALIASES)[number];

/** The line after the first step of a turn whose calls were all successful todo-write calls. */
export const PLAN_ONLY_NUDGE =
  'Plan updated. Continue with the next concrete action in the same response next time.';

const TODO_WRITE_DESCRIPTION = [
  'Keep the plan for genuinely multi-step work as a task list with dependencies. Skip it for simple or single-step requests.',
  'Never make it the only call in a step: a step spent on the list alone does not advance the work, so always send it together with the next concrete action (an edit, a command, a read).',
  'todos without merge replaces the whole list. With merge: true, only the given tasks are inserted or updated by id, and fields you leave out keep their stored value. delete removes tasks by id; clear_completed removes completed and cancelled tasks. A call with none of these only reads the list.',
  'Tasks without an id get the next free task-N. dependencies are ids of tasks that must be finished (completed or cancelled) first: unknown ids are dropped, self-references and cycles are rejected, and a task cannot be set in_progress or completed while a dependency is unfinished.',
  'Every call returns the full list in dependency order, one task per line: [ ] pending, [>] in_progress, [x] completed, [!] blocked, [-] cancelled, with its dependencies, what still blocks it, and "ready" when it can be started now.',
].join(' ');

/** What the model is shown about `todo-write`. */
export const TODO_WRITE_TOOL_SPEC = {
  name: TOOL.todoWrite,
  description: TODO_WRITE_DESCRIPTION,
  inputSchema: {
    type: 'object',
    properties: {
      todos: {
        type: 'array',
        description:
          'Tasks to write. Without merge this is the whole new list; with merge: true only these tasks are inserted or updated.',
        items: {
          type: 'object',
          properties: {
            id: {
              type: 'string',
              description: 'Task id, e.g. task-3. Leave it out for a new task to get the next free task-N.',
            },
            content: { type: 'string', description: 'What the task is, in one imperative line.' },
            status: {
              type: 'string',
              enum: [...TASK_STATUSES],
              description: 'Defaults to pending for a new task.',
            },
            dependencies: {
              type: 'array',
              items: { type: 'string' },
              description: 'Ids of tasks that must be completed first. Replaces the stored list when given.',
            },
          },
          additionalProperties: false,
        },
      },
      merge: {
        type: 'boolean',
        description: 'Insert or update only the given tasks by id instead of replacing the whole list.',
      },
      delete: { type: 'array', items: { type: 'string' }, description: 'Ids of tasks to remove.' },
      clear_completed: { type: 'boolean', description: 'Remove every completed and cancelled task.' },
    },
    additionalProperties: false,
  },
} as const;

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
 * Maps a call of a retired task tool onto todo-write arguments, to be passed to applyTodoWrite:
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
