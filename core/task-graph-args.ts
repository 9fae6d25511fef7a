/**
 * A todo-write call as the task graph receives it: already validated and normalized by the zod
 * schema in todo-write-schema.ts, at the model-step boundary. Free of zod, so that the workflow,
 * which applies the call, does not load zod for it.
 */
import type { TaskStatus } from './task-graph-types';
import { TOOL } from './tool-names';

/** Prefix of every error text, so the model knows which tool complained. */
export const TODO_WRITE_ERROR_PREFIX = `${TOOL.todoWrite}:`;

/** Most characters a task's content may hold; the graph lives in durable workflow state. */
export const MAX_TASK_CONTENT_CHARS = 4_000;

/** What a task id may look like: short, no spaces, nothing that breaks the rendered list. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$/;

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
