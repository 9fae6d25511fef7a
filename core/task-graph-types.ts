/**
 * Data types of the session task graph (spec S-TASKS). Plain JSON-serializable data: the graph lives
 * in durable workflow state and in the session store, so it holds no classes, maps or dates.
 */

/** Every task status, in the order error texts and summaries list them. */
export const TASK_STATUSES = ['pending', 'in_progress', 'completed', 'blocked', 'cancelled'] as const;

/** One of the five task statuses. */
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** One stored task. `dependencies` are ids of tasks that must be finished before this one. */
export interface Task {
  id: string;
  content: string;
  status: TaskStatus;
  dependencies: string[];
}

/** The stored list, in insertion order (dependency order is derived, never stored). */
export type TaskGraph = Task[];

/** A task as the model and the UIs see it, with its derived scheduling state. */
export interface TaskView extends Task {
  /** The task's dependencies that are not finished yet. */
  blocked_by: string[];
  /** Pending with every dependency finished: the task can be started now. */
  ready: boolean;
}

/** The empty graph a new session starts with. */
export const EMPTY_TASK_GRAPH: TaskGraph = [];

/**
 * Whether a task no longer gates its dependents. Cancelled counts as finished: clear_completed
 * prunes cancelled tasks and strips references to them, so treating them as gating would make a
 * dependent's readiness change merely because the list was tidied.
 */
export function isFinished(status: TaskStatus): boolean {
  return status === 'completed' || status === 'cancelled';
}

/** Whether a status claims work has started or ended, which requires every dependency finished. */
export function requiresFinishedDependencies(status: TaskStatus): boolean {
  return status === 'in_progress' || status === 'completed';
}
