/**
 * Validation of the model's todo-write arguments, by hand: this runs in workflow code, which must
 * stay free of libraries with their own non-determinism. Every problem is reported with the field
 * it concerns, all at once, so the model can fix a call in one retry.
 */
import { TASK_STATUSES, type TaskStatus } from './task-graph-types';
import { TOOL } from './tool-names';

/** Prefix of every error text, so the model knows which tool complained. */
export const TODO_WRITE_ERROR_PREFIX = `${TOOL.todoWrite}:`;

/** Most characters a task's content may hold; the graph lives in durable workflow state. */
export const MAX_TASK_CONTENT_CHARS = 4_000;

/** What a task id may look like: short, no spaces, nothing that breaks the rendered list. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$/;

const TOP_LEVEL_FIELDS = ['todos', 'merge', 'delete', 'clear_completed'];
const TASK_FIELDS = ['id', 'content', 'status', 'dependencies'];
const STATUS_LIST = TASK_STATUSES.join(', ');
/** Longest rendering of an offending value quoted back in an error text. */
const QUOTED_VALUE_MAX_CHARS = 40;

/** One entry of `todos` as written; absent fields stay undefined. */
export interface TodoInput {
  /** Position in the call's `todos`, for error texts. */
  index: number;
  id?: string;
  content?: string;
  status?: TaskStatus;
  dependencies?: string[];
}

/** A well-formed todo-write call. */
export interface TodoWriteArgs {
  /** Undefined when the call does not write tasks. */
  todos?: TodoInput[];
  merge: boolean;
  delete: string[];
  clearCompleted: boolean;
}

/** The outcome of validating a call: the arguments plus notes, or every problem found. */
export type ParsedTodoWrite =
  | { ok: true; args: TodoWriteArgs; notes: string[] }
  | { ok: false; errors: string[] };

/** Short, deterministic rendering of a bad value (no engine-specific error texts). */
function quote(value: unknown): string {
  const text = value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  return text.length > QUOTED_VALUE_MAX_CHARS ? `${text.slice(0, QUOTED_VALUE_MAX_CHARS)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Optional fields may arrive as null from strict-schema providers; null means left out. */
function isAbsent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
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

/** A list of ids (dependencies, delete): an array of strings, a lone string meaning a list of one. */
function parseIdList(value: unknown, field: string, errors: string[]): string[] {
  const decoded = decodeNested(value);
  const items = typeof decoded === 'string' ? [decoded] : decoded;
  if (!Array.isArray(items)) {
    errors.push(`${field} must be an array of task ids (got ${quote(value)})`);
    return [];
  }
  const ids: string[] = [];
  items.forEach((item, index) => {
    if (typeof item !== 'string' || item.trim() === '') {
      errors.push(`${field}[${index}] must be a non-empty task id string (got ${quote(item)})`);
    } else if (!ids.includes(item.trim())) {
      ids.push(item.trim());
    }
  });
  return ids;
}

function parseFlag(value: unknown, field: string, errors: string[]): boolean {
  if (isAbsent(value)) return false;
  if (typeof value === 'boolean') return value;
  errors.push(`${field} must be true or false (got ${quote(value)})`);
  return false;
}

function parseTodo(value: unknown, index: number, errors: string[], ignored: Set<string>): TodoInput {
  const at = `todos[${index}]`;
  const todo: TodoInput = { index };
  if (!isRecord(value)) {
    errors.push(`${at} must be an object with content and optionally id, status, dependencies`);
    return todo;
  }
  for (const key of Object.keys(value)) if (!TASK_FIELDS.includes(key)) ignored.add(key);
  if (!isAbsent(value.id)) {
    const id = typeof value.id === 'string' ? value.id.trim() : undefined;
    if (id === undefined || !TASK_ID_PATTERN.test(id)) {
      errors.push(
        `${at}.id must be 1-64 letters, digits or . _ : / - starting with a letter or digit (got ${quote(value.id)})`,
      );
    } else {
      todo.id = id;
    }
  }
  if (!isAbsent(value.content)) {
    const content = typeof value.content === 'string' ? value.content.trim() : '';
    if (content === '') {
      errors.push(`${at}.content must be a non-empty string (got ${quote(value.content)})`);
    } else if (content.length > MAX_TASK_CONTENT_CHARS) {
      errors.push(
        `${at}.content must be at most ${MAX_TASK_CONTENT_CHARS} characters (got ${content.length})`,
      );
    } else {
      todo.content = content;
    }
  }
  if (!isAbsent(value.status)) {
    if (typeof value.status === 'string' && (TASK_STATUSES as readonly string[]).includes(value.status)) {
      todo.status = value.status as TaskStatus;
    } else {
      errors.push(`${at}.status must be one of ${STATUS_LIST} (got ${quote(value.status)})`);
    }
  }
  if (!isAbsent(value.dependencies)) {
    todo.dependencies = parseIdList(value.dependencies, `${at}.dependencies`, errors);
  }
  return todo;
}

/** Two entries with one id would make the call's meaning depend on their order; refuse instead. */
function checkRepeatedIds(todos: TodoInput[], errors: string[]): void {
  const firstIndex = new Map<string, number>();
  for (const todo of todos) {
    if (todo.id === undefined) continue;
    const first = firstIndex.get(todo.id);
    if (first === undefined) firstIndex.set(todo.id, todo.index);
    else errors.push(`todos[${todo.index}].id "${todo.id}" repeats todos[${first}].id`);
  }
}

/** Turns the raw tool arguments into a call, or every problem with them. */
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
  if (isAbsent(value)) value = {};
  if (!isRecord(value)) {
    return {
      ok: false,
      errors: [
        `arguments must be an object with todos, merge, delete or clear_completed (got ${quote(value)})`,
      ],
    };
  }
  const errors: string[] = [];
  // A misspelt flag silently ignored could turn a merge into a replace that wipes the list.
  for (const key of Object.keys(value)) {
    if (!TOP_LEVEL_FIELDS.includes(key)) {
      errors.push(`unknown field "${key}" (expected ${TOP_LEVEL_FIELDS.join(', ')})`);
    }
  }
  const merge = parseFlag(value.merge, 'merge', errors);
  const clearCompleted = parseFlag(value.clear_completed, 'clear_completed', errors);
  const toDelete = isAbsent(value.delete) ? [] : parseIdList(value.delete, 'delete', errors);
  const ignored = new Set<string>();
  let todos: TodoInput[] | undefined;
  if (!isAbsent(value.todos)) {
    const list = decodeNested(value.todos);
    if (Array.isArray(list)) {
      todos = list.map((item, index) => parseTodo(item, index, errors, ignored));
      checkRepeatedIds(todos, errors);
    } else {
      errors.push(`todos must be an array of tasks (got ${quote(value.todos)})`);
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  const notes =
    ignored.size > 0
      ? [`ignored unknown task fields: ${[...ignored].join(', ')} (a task has ${TASK_FIELDS.join(', ')})`]
      : [];
  return { ok: true, args: { todos, merge, delete: toDelete, clearCompleted }, notes };
}
