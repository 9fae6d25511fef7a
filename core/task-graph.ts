/**
 * The session task graph behind the todo-write tool (spec S-TASKS). Pure and deterministic: it runs
 * inside Temporal workflow code, so it uses no I/O, clock, randomness or libraries.
 *
 * One call, in this order (its arguments already validated by the zod schema in
 * todo-write-schema.ts, at the model-step boundary): write `todos` (a full replace, or with
 * `merge: true` an insert-or-update by id); drop dependencies on unknown ids (noted); apply
 * `delete`, stripping references to the deleted tasks (noted); apply `clear_completed`; then check
 * the resulting graph as a whole. Any problem rejects the whole call and changes nothing, so the
 * stored graph always satisfies the invariants:
 * - ids are unique, and every dependency names a task in the list;
 * - no task depends on itself and there is no cycle;
 * - no in_progress or completed task has an unfinished dependency. This holds for every write, a
 *   full replace included, and also forbids moving a dependency back (e.g. to pending) while a
 *   started or completed task depends on it.
 * Cancelled tasks count as finished (see isFinished).
 */
import { jsonBytes } from './compaction/state-size';
import { type ParsedTodoWrite, TODO_WRITE_ERROR_PREFIX, type TodoWriteArgs } from './task-graph-args';
import { dependencyOrder, findCycle, incompleteDependencies, indexById, taskView } from './task-graph-order';
import { renderTaskList, summarizeTaskList } from './task-graph-render';
import { requiresFinishedDependencies, type Task, type TaskGraph, type TaskView } from './task-graph-types';
import {
  clearFinished,
  copyGraph,
  deleteTasks,
  dropUnknownDependencies,
  mergeTasks,
  replaceTasks,
} from './task-graph-write';

export { MAX_TASK_CONTENT_CHARS, TASK_ID_PATTERN } from './task-graph-args';
export { dependencyOrder, findCycle, taskView } from './task-graph-order';
export {
  renderTaskList,
  renderTasksMarkdown,
  summarizeTaskList,
  TASK_STATUS_MARKS,
} from './task-graph-render';
export * from './task-graph-types';

/** Most tasks the list may hold; the graph is carried in durable workflow state. */
export const MAX_TASKS = 300;
/**
 * JSON bytes the whole list may take: it lives in the goal's control state, which continue-as-new
 * carries (see core/state-bounds.ts for the budget of that state).
 */
export const MAX_TASK_GRAPH_BYTES = 32 * 1024;

/** Last line of every rejection. */
export const NOTHING_CHANGED = 'Nothing was changed.';

/** How the caller runs: a sub-agent shares its parent's list and may not replace it. */
export interface TodoWriteOptions {
  subAgent?: boolean;
}

/** The outcome of one todo-write call. */
export interface TodoWriteOutcome {
  /** The graph after the call; the input graph itself when the call was rejected. */
  graph: TaskGraph;
  /** False when the call was rejected; it then changed nothing. */
  ok: boolean;
  /** What the model sees: the full list in dependency order with notes, or the error. */
  result: string;
  /** Side remarks on an accepted call (dropped dependencies, sub-agent merge, deletions). */
  notes: string[];
  /** Whether the graph differs from the input. */
  changed: boolean;
  /** The resulting list in dependency order, with blocked_by and ready. */
  view: TaskView[];
}

function sameTask(a: Task, b: Task): boolean {
  return (
    a.id === b.id &&
    a.content === b.content &&
    a.status === b.status &&
    a.dependencies.length === b.dependencies.length &&
    a.dependencies.every((dep, index) => dep === b.dependencies[index])
  );
}

function sameGraph(a: TaskGraph, b: TaskGraph): boolean {
  return a.length === b.length && a.every((task, index) => sameTask(task, b[index]));
}

/** The text the model sees for an accepted call. */
export function renderTodoWriteResult(view: TaskView[], notes: string[]): string {
  const lines = view.length > 0 ? [summarizeTaskList(view), renderTaskList(view)] : [renderTaskList(view)];
  if (notes.length > 0) lines.push('Notes:', ...notes.map((note) => `- ${note}`));
  return lines.join('\n');
}

function rejected(graph: TaskGraph, errors: string[]): TodoWriteOutcome {
  const result = [...errors.map((error) => `${TODO_WRITE_ERROR_PREFIX} ${error}`), NOTHING_CHANGED].join(
    '\n',
  );
  return { graph, ok: false, result, notes: [], changed: false, view: taskView(graph) };
}

function accepted(before: TaskGraph, after: TaskGraph, notes: string[]): TodoWriteOutcome {
  const changed = !sameGraph(before, after);
  const graph = changed ? after : before;
  const view = taskView(graph);
  return { graph, ok: true, result: renderTodoWriteResult(view, notes), notes, changed, view };
}

/**
 * Explains why started or completed tasks have unfinished dependencies. The task this call set
 * (status or dependencies) is the one blamed, so the message names the move the model made.
 */
function gatingErrors(tasks: Task[], touched: Set<string>): string[] {
  const byId = indexById(tasks);
  const errors: string[] = [];
  for (const task of dependencyOrder(tasks)) {
    if (!requiresFinishedDependencies(task.status)) continue;
    for (const depId of incompleteDependencies(task, byId)) {
      const dep = byId.get(depId)!;
      if (!touched.has(task.id) && touched.has(dep.id)) {
        errors.push(
          `${dep.id} cannot be moved to ${dep.status} while ${task.id} (${task.status}) depends on it`,
        );
      } else {
        errors.push(`${task.id} cannot be ${task.status} while its dependency ${dep.id} is ${dep.status}`);
      }
    }
  }
  return errors;
}

/** Checks the invariants on the graph a call would leave; any error rejects the call. */
function graphErrors(tasks: Task[], touched: Set<string>): string[] {
  if (tasks.length > MAX_TASKS) {
    return [`the list would hold ${tasks.length} tasks; at most ${MAX_TASKS} are allowed`];
  }
  const bytes = jsonBytes(tasks);
  if (bytes > MAX_TASK_GRAPH_BYTES) {
    return [
      `the list would take ${bytes} bytes; at most ${MAX_TASK_GRAPH_BYTES} are kept in the goal's state (shorten the task texts, or drop finished tasks with clear_completed)`,
    ];
  }
  const selfReferences = tasks
    .filter((task) => task.dependencies.includes(task.id))
    .map((task) => `${task.id} depends on itself`);
  if (selfReferences.length > 0) return selfReferences;
  const cycle = findCycle(tasks);
  if (cycle !== undefined) return [`dependency cycle ${cycle.join(' -> ')}`];
  return gatingErrors(tasks, touched);
}

function isReadOnly(args: TodoWriteArgs): boolean {
  return args.todos === undefined && args.delete.length === 0 && !args.clearCompleted;
}

/**
 * Applies one todo-write call to the stored graph. `parsed` is the model's arguments as
 * parseTodoWriteArgs returned them (the shape checked, or every problem with it); this checks what
 * needs the graph: ids, dependencies, cycles, the size of the list. Never mutates `graph`, and
 * never throws: every problem comes back as a rejection the model can read.
 */
export function applyTodoWrite(
  graph: TaskGraph,
  parsed: ParsedTodoWrite,
  options: TodoWriteOptions = {},
): TodoWriteOutcome {
  if (!parsed.ok) return rejected(graph, parsed.errors);
  const { args } = parsed;
  const notes = [...parsed.notes];
  if (isReadOnly(args)) return accepted(graph, graph, notes);

  const subAgent = options.subAgent === true;
  let tasks = copyGraph(graph);
  let touched = new Set<string>();
  let written = new Set<string>();
  if (args.todos !== undefined) {
    if (subAgent && !args.merge) notes.push('sub-agent: todos were merged into the list, not replacing it');
    const write = args.merge || subAgent ? mergeTasks(graph, args.todos, subAgent) : replaceTasks(args.todos);
    if (!write.ok) return rejected(graph, write.errors);
    ({ tasks, touched, written } = write);
  }
  const conflicts = args.delete
    .filter((id) => written.has(id))
    .map((id) => `${id} is both written in todos and listed in delete`);
  if (conflicts.length > 0) return rejected(graph, conflicts);

  dropUnknownDependencies(tasks, notes);
  if (args.delete.length > 0) tasks = deleteTasks(tasks, args.delete, notes);
  if (args.clearCompleted) tasks = clearFinished(tasks, notes);
  const errors = graphErrors(tasks, touched);
  if (errors.length > 0) return rejected(graph, errors);
  return accepted(graph, tasks, notes);
}
