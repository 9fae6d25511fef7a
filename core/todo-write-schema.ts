/**
 * The arguments of `todo-write` as one zod schema: its JSON Schema (with the field descriptions) is
 * what the model is shown, and the model step validates every call against it before the call
 * reaches the workflow. Tolerant where models are sloppy: null means absent (strict-schema providers
 * send it for every optional field), nested arrays double-encoded as JSON strings are decoded, a
 * lone id stands for a list of one, and unknown task fields are ignored with a note. Every problem
 * is reported at once with the field it concerns, so the model can fix a call in one retry.
 *
 * Workflow code loads this module only for calls recorded before validation moved to the model
 * step (core/workflow-tools.ts): zod schemas would otherwise be instantiated per cached workflow.
 */
import { z } from 'zod';
import { modelJsonSchema } from './model-json-schema';
import {
  MAX_TASK_CONTENT_CHARS,
  type ParsedTodoWrite,
  TASK_ID_PATTERN,
  type TodoInput,
  type TodoWriteArgs,
} from './task-graph-args';
import { TASK_STATUSES } from './task-graph-types';
import { clip } from './text';
import { TOOL } from './tool-names';

const TOP_LEVEL_FIELDS = ['todos', 'merge', 'delete', 'clear_completed'];
const TASK_FIELDS = ['id', 'content', 'status', 'dependencies'];
/** Longest rendering of an offending value quoted back in an error text. */
const QUOTED_VALUE_MAX_CHARS = 40;

const TODO_WRITE_DESCRIPTION = [
  'Keep the plan for genuinely multi-step work as a task list with dependencies. Skip it for simple or single-step requests.',
  'Never make it the only call in a step: a step spent on the list alone does not advance the work, so always send it together with the next concrete action (an edit, a command, a read).',
  'todos without merge replaces the whole list. With merge: true, only the given tasks are inserted or updated by id, and fields you leave out keep their stored value. delete removes tasks by id; clear_completed removes completed and cancelled tasks. A call with none of these only reads the list.',
  'Tasks without an id get the next free task-N. dependencies are ids of tasks that must be finished (completed or cancelled) first: unknown ids are dropped, self-references and cycles are rejected, and a task cannot be set in_progress or completed while a dependency is unfinished.',
  'Every call returns the full list in dependency order, one task per line: [ ] pending, [>] in_progress, [x] completed, [!] blocked, [-] cancelled, with its dependencies, what still blocks it, and "ready" when it can be started now.',
].join(' ');

/** Short, deterministic rendering of a bad value (no engine-specific error texts). */
function quote(value: unknown): string {
  const text = value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  return clip(text, QUOTED_VALUE_MAX_CHARS + 1);
}

/** An error text that quotes the offending value, e.g. `must be true or false (got "yes")`. */
const got =
  (problem: string) =>
  (issue: { input?: unknown }): string =>
    `${problem} (got ${quote(issue.input)})`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Optional fields may arrive as null from strict-schema providers; null means left out. */
function absentIfNull(value: unknown): unknown {
  return value === null ? undefined : value;
}

/** Some models double-encode nested arrays as JSON strings; accept those when they decode cleanly. */
function decodeNested(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  if (!trimmed.startsWith('[')) return value;
  try {
    return JSON.parse(trimmed);
  } catch {
    return value;
  }
}

/** An optional field, null counting as left out. */
function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess(absentIfNull, schema.optional());
}

const NON_EMPTY_ID = 'must be a non-empty task id string';

/** A list of task ids (dependencies, delete): an array of strings, a lone string meaning a list of one. */
function idList(description: string) {
  const id = z
    .string({ error: got(NON_EMPTY_ID) })
    .refine((text) => text.trim() !== '', { error: got(NON_EMPTY_ID) });
  const ids = z
    .array(id, { error: got('must be an array of task ids') })
    .transform((list) => [...new Set(list.map((text) => text.trim()))]);
  return z
    .preprocess((value) => {
      const decoded = decodeNested(absentIfNull(value));
      return typeof decoded === 'string' ? [decoded] : decoded;
    }, ids.optional())
    .describe(description);
}

const ID_RULE = 'must be 1-64 letters, digits or . _ : / - starting with a letter or digit';
const taskId = z
  .string({ error: got(ID_RULE) })
  .refine((id) => TASK_ID_PATTERN.test(id.trim()), { error: got(ID_RULE) })
  .transform((id) => id.trim());

const NON_EMPTY = 'must be a non-empty string';
const taskContent = z
  .string({ error: got(NON_EMPTY) })
  .superRefine((text, ctx) => {
    const length = text.trim().length;
    if (length === 0) ctx.addIssue({ code: 'custom', message: got(NON_EMPTY)({ input: text }) });
    else if (length > MAX_TASK_CONTENT_CHARS) {
      ctx.addIssue({
        code: 'custom',
        message: `must be at most ${MAX_TASK_CONTENT_CHARS} characters (got ${length})`,
      });
    }
  })
  .transform((text) => text.trim());

const taskStatus = z.enum(TASK_STATUSES, { error: got(`must be one of ${TASK_STATUSES.join(', ')}`) });

/** One task; fields it does not know are kept here, to be noted and dropped by toArgs. */
const task = z.looseObject(
  {
    id: optional(taskId).describe(
      'Task id, e.g. task-3. Leave it out for a new task to get the next free task-N.',
    ),
    content: optional(taskContent).describe('What the task is, in one imperative line.'),
    status: optional(taskStatus).describe('Defaults to pending for a new task.'),
    dependencies: idList('Ids of tasks that must be completed first. Replaces the stored list when given.'),
  },
  { error: () => 'must be an object with content and optionally id, status, dependencies' },
);

/** Two entries with one id would make the call's meaning depend on their order; refuse instead. */
function reportRepeatedIds(items: unknown, ctx: z.RefinementCtx): void {
  if (!Array.isArray(items)) return;
  const firstIndex = new Map<string, number>();
  items.forEach((item, index) => {
    const id = isRecord(item) && typeof item.id === 'string' ? item.id.trim() : undefined;
    if (id === undefined || !TASK_ID_PATTERN.test(id)) return;
    const first = firstIndex.get(id);
    if (first === undefined) firstIndex.set(id, index);
    else ctx.addIssue({ code: 'custom', path: [index, 'id'], message: `"${id}" repeats todos[${first}].id` });
  });
}

const tasks = z
  .preprocess(
    (value) => decodeNested(absentIfNull(value)),
    z
      .array(task, { error: got('must be an array of tasks') })
      // Also when some tasks are malformed: every problem is reported at once.
      .superRefine(reportRepeatedIds, { when: () => true })
      .optional(),
  )
  .describe(
    'Tasks to write. Without merge this is the whole new list; with merge: true only these tasks are inserted or updated.',
  );

const flag = optional(z.boolean({ error: got('must be true or false') }));

/** The fields as the model sends them, each checked and normalized on its own. */
const todoWriteFields = z.strictObject(
  {
    todos: tasks,
    merge: flag.describe('Insert or update only the given tasks by id instead of replacing the whole list.'),
    delete: idList('Ids of tasks to remove.'),
    clear_completed: flag.describe('Remove every completed and cancelled task.'),
  },
  {
    error: (issue) =>
      issue.code === 'invalid_type'
        ? `arguments must be an object with todos, merge, delete or clear_completed (got ${quote(issue.input)})`
        : undefined,
  },
);

/** The fields as a normalized call, plus the unknown task fields it ignored. */
function toArgs(value: z.output<typeof todoWriteFields>): { args: TodoWriteArgs; ignoredFields: string[] } {
  const ignored = new Set<string>();
  const todos = value.todos?.map(({ id, content, status, dependencies, ...unknownFields }, index) => {
    for (const field of Object.keys(unknownFields)) ignored.add(field);
    const todo: TodoInput = { index };
    if (id !== undefined) todo.id = id;
    if (content !== undefined) todo.content = content;
    if (status !== undefined) todo.status = status;
    if (dependencies !== undefined) todo.dependencies = dependencies;
    return todo;
  });
  const args: TodoWriteArgs = {
    merge: value.merge ?? false,
    delete: value.delete ?? [],
    clearCompleted: value.clear_completed ?? false,
  };
  if (todos !== undefined) args.todos = todos;
  return { args, ignoredFields: [...ignored] };
}

/** The arguments of todo-write, as the model is shown them and as its calls are validated. */
export const todoWriteSchema = todoWriteFields.transform(toArgs);

/** What the model is shown about `todo-write`. */
export function todoWriteToolSpec(): {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
} {
  return {
    name: TOOL.todoWrite,
    description: TODO_WRITE_DESCRIPTION,
    inputSchema: modelJsonSchema(todoWriteSchema),
  };
}

/** The order problems are listed in: unknown fields first (a misspelt flag explains the rest), then by field. */
const FIELD_ORDER = ['', 'merge', 'clear_completed', 'delete', 'todos'];

function fieldRank(issue: z.core.$ZodIssue): number {
  if (issue.code === 'unrecognized_keys') return 0;
  const rank = FIELD_ORDER.indexOf(String(issue.path[0] ?? ''));
  return rank === -1 ? FIELD_ORDER.length : rank;
}

/** `todos[2].status`, from zod's path ['todos', 2, 'status']. */
function fieldPath(path: PropertyKey[]): string {
  return path
    .map((part, index) =>
      typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`,
    )
    .join('');
}

/** Each problem as `field message`, e.g. `todos[0].status must be one of …`. */
function describeIssues(issues: z.core.$ZodIssue[]): string[] {
  return [...issues]
    .sort((a, b) => fieldRank(a) - fieldRank(b))
    .flatMap((issue) => {
      if (issue.code === 'unrecognized_keys') {
        // A misspelt flag silently ignored could turn a merge into a replace that wipes the list.
        return issue.keys.map((key) => `unknown field "${key}" (expected ${TOP_LEVEL_FIELDS.join(', ')})`);
      }
      const field = fieldPath(issue.path);
      return [field === '' ? issue.message : `${field} ${issue.message}`];
    });
}

/** Turns the model's raw arguments (an object, or its JSON text) into a call, or every problem with them. */
export function parseTodoWriteArgs(raw: unknown): ParsedTodoWrite {
  let value = raw;
  if (typeof value === 'string') {
    if (value.trim() === '') value = {};
    else {
      try {
        value = JSON.parse(value);
      } catch {
        return {
          ok: false,
          errors: ['arguments must be a JSON object; got a string that is not valid JSON'],
        };
      }
    }
  }
  const result = todoWriteSchema.safeParse(value ?? {});
  if (!result.success) return { ok: false, errors: describeIssues(result.error.issues) };
  const { args, ignoredFields } = result.data;
  const notes =
    ignoredFields.length > 0
      ? [`ignored unknown task fields: ${ignoredFields.join(', ')} (a task has ${TASK_FIELDS.join(', ')})`]
      : [];
  return { ok: true, args, notes };
}
