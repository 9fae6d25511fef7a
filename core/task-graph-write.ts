/**
 * The mutating steps of a todo-write call, each on a fresh copy of the list: writing `todos`
 * (replace or merge), dropping unknown dependencies, `delete` and `clear_completed`. Validation of
 * the resulting graph is left to the caller, which rejects the whole call on any problem.
 */
import type { TodoInput } from './task-graph-args';
import { isFinished, type Task, type TaskGraph } from './task-graph-types';

/** Prefix of generated task ids. */
export const GENERATED_ID_PREFIX = 'task-';

/** Suffixes longer than this cannot be counted exactly and are skipped when picking the next number. */
const MAX_COUNTED_DIGITS = 15;
const GENERATED_ID_PATTERN = new RegExp(`^${GENERATED_ID_PREFIX}(\\d{1,${MAX_COUNTED_DIGITS}})$`);

/** The list after writing `todos`, or the problems that stop the write. */
export type WriteResult =
  | {
      ok: true;
      tasks: Task[];
      /** Ids whose status or dependencies this call set: they are the ones to blame on a conflict. */
      touched: Set<string>;
      /** Ids of every task this call wrote. */
      written: Set<string>;
    }
  | { ok: false; errors: string[] };

function copyTask(task: Task): Task {
  return { id: task.id, content: task.content, status: task.status, dependencies: [...task.dependencies] };
}

/** Copies the graph so no step ever mutates the caller's (durable) state. */
export function copyGraph(graph: TaskGraph): Task[] {
  return graph.map(copyTask);
}

/**
 * Hands out `task-N` ids: N starts one past the highest number in use, so a new task never takes
 * the id of one still in the list and, in the common case of deleting from the middle, not that
 * of a recently deleted one either; ids are still checked against every id taken, so they stay
 * unique whatever the existing ids look like.
 */
function idAllocator(taken: Set<string>): () => string {
  let next = 1;
  for (const id of taken) {
    const match = GENERATED_ID_PATTERN.exec(id);
    if (match) next = Math.max(next, Number(match[1]) + 1);
  }
  return () => {
    while (taken.has(`${GENERATED_ID_PREFIX}${next}`)) next += 1;
    const id = `${GENERATED_ID_PREFIX}${next}`;
    taken.add(id);
    next += 1;
    return id;
  };
}

function newTask(todo: TodoInput, id: string): Task {
  return {
    id,
    content: todo.content!,
    status: todo.status ?? 'pending',
    dependencies: todo.dependencies ?? [],
  };
}

/**
 * Replaces the whole list with `todos`, each task written whole: content is required, a missing
 * status means pending and missing dependencies mean none. Keeping stored fields here would make
 * a replace half a merge, and `merge: true` already exists for that.
 */
export function replaceTasks(todos: TodoInput[]): WriteResult {
  const errors: string[] = [];
  for (const todo of todos) {
    if (todo.content === undefined) {
      errors.push(
        `todos[${todo.index}].content must be a non-empty string (a full replace writes every task whole; use merge: true to change only some fields)`,
      );
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  const nextId = idAllocator(new Set(todos.flatMap((todo) => (todo.id === undefined ? [] : [todo.id]))));
  const tasks = todos.map((todo) => newTask(todo, todo.id ?? nextId()));
  const ids = new Set(tasks.map((task) => task.id));
  return { ok: true, tasks, touched: ids, written: new Set(ids) };
}

/**
 * Inserts or updates the given tasks by id; fields left out keep their stored value and given
 * dependencies replace the stored list. New tasks go to the end of the list. In sub-agent mode a
 * task without an id first looks for a stored task with exactly the same content that the call
 * does not already address, so a worker rewriting its own list updates it instead of adding copies.
 */
export function mergeTasks(stored: TaskGraph, todos: TodoInput[], subAgent: boolean): WriteResult {
  const tasks = copyGraph(stored);
  const byId = new Map(tasks.map((task) => [task.id, task]));
  const addressed = new Set(todos.flatMap((todo) => (todo.id === undefined ? [] : [todo.id])));
  const nextId = idAllocator(new Set([...byId.keys(), ...addressed]));
  const claimed = new Set<string>();
  const touched = new Set<string>();
  const written = new Set<string>();
  const errors: string[] = [];
  for (const todo of todos) {
    let target = todo.id === undefined ? undefined : byId.get(todo.id);
    if (todo.id === undefined && subAgent && todo.content !== undefined) {
      const twin = stored.find(
        (task) => task.content === todo.content && !addressed.has(task.id) && !claimed.has(task.id),
      );
      if (twin !== undefined) {
        claimed.add(twin.id);
        target = byId.get(twin.id);
      }
    }
    if (target !== undefined) {
      if (todo.content !== undefined) target.content = todo.content;
      if (todo.status !== undefined) target.status = todo.status;
      if (todo.dependencies !== undefined) target.dependencies = [...todo.dependencies];
      if (todo.status !== undefined || todo.dependencies !== undefined) touched.add(target.id);
      written.add(target.id);
      continue;
    }
    if (todo.content === undefined) {
      const why = todo.id === undefined ? 'a task without an id is a new task' : `${todo.id} is a new task`;
      errors.push(`todos[${todo.index}].content must be a non-empty string (${why})`);
      continue;
    }
    const task = newTask(todo, todo.id ?? nextId());
    tasks.push(task);
    byId.set(task.id, task);
    touched.add(task.id);
    written.add(task.id);
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, tasks, touched, written };
}

/** Drops dependencies on ids that are not in the list, with a note for each task concerned. */
export function dropUnknownDependencies(tasks: Task[], notes: string[]): void {
  const ids = new Set(tasks.map((task) => task.id));
  for (const task of tasks) {
    const unknown = task.dependencies.filter((dep) => !ids.has(dep));
    if (unknown.length === 0) continue;
    task.dependencies = task.dependencies.filter((dep) => ids.has(dep));
    const noun = unknown.length === 1 ? 'dependency' : 'dependencies';
    notes.push(`${task.id}: dropped unknown ${noun} ${unknown.join(', ')}`);
  }
}

/** Removes the tasks and strips every reference to them, so no dependency is left dangling. */
function removeTasks(tasks: Task[], removed: Set<string>): { kept: Task[]; stripped: Map<string, string[]> } {
  const kept = tasks.filter((task) => !removed.has(task.id));
  const stripped = new Map<string, string[]>();
  for (const task of kept) {
    const lost = task.dependencies.filter((dep) => removed.has(dep));
    if (lost.length === 0) continue;
    task.dependencies = task.dependencies.filter((dep) => !removed.has(dep));
    stripped.set(task.id, lost);
  }
  return { kept, stripped };
}

/**
 * Applies `delete`. Unknown ids are noted, not rejected: the end state the model asked for (no
 * such task) already holds. Dependents that lose a dependency are noted, since that may make
 * them ready.
 */
export function deleteTasks(tasks: Task[], ids: string[], notes: string[]): Task[] {
  const present = new Set(tasks.map((task) => task.id));
  const unknown = ids.filter((id) => !present.has(id));
  const removed = new Set(ids.filter((id) => present.has(id)));
  if (unknown.length > 0) notes.push(`delete: no task ${unknown.join(', ')}`);
  if (removed.size === 0) return tasks;
  notes.push(`deleted ${[...removed].join(', ')}`);
  const { kept, stripped } = removeTasks(tasks, removed);
  for (const [id, lost] of stripped) {
    notes.push(`${id}: removed dependency on deleted ${lost.join(', ')}`);
  }
  return kept;
}

/**
 * Applies `clear_completed`: prunes completed and cancelled tasks. References to them are
 * stripped without a note, since a finished dependency gated nothing.
 */
export function clearFinished(tasks: Task[], notes: string[]): Task[] {
  const removed = new Set(tasks.filter((task) => isFinished(task.status)).map((task) => task.id));
  if (removed.size === 0) {
    notes.push('clear_completed: no completed or cancelled tasks');
    return tasks;
  }
  notes.push(`clear_completed: removed ${[...removed].join(', ')}`);
  return removeTasks(tasks, removed).kept;
}
