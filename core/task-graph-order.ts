/**
 * Structure of the task graph: dependency order, cycle detection and the derived view (blocked_by,
 * ready). Pure code, safe inside workflow code.
 */
import { isFinished, type Task, type TaskGraph, type TaskView } from './task-graph-types';

/** Index of every task by id. */
export function indexById(graph: TaskGraph): Map<string, Task> {
  const byId = new Map<string, Task>();
  for (const task of graph) byId.set(task.id, task);
  return byId;
}

/**
 * The task's dependencies that are not finished. An id missing from the graph counts as
 * unfinished: a valid graph has none, and claiming a dangling dependency is met would be unsafe.
 */
export function incompleteDependencies(task: Task, byId: Map<string, Task>): string[] {
  return task.dependencies.filter((dep) => {
    const found = byId.get(dep);
    return found === undefined || !isFinished(found.status);
  });
}

/**
 * The graph in dependency order: every task after its dependencies, and among tasks free to go
 * next the one stored first, so independent tasks keep their insertion order (a stable
 * topological sort). Dependencies on missing ids are ignored; should the stored graph hold a
 * cycle anyway, the tasks on it follow in stored order rather than vanish.
 */
export function dependencyOrder(graph: TaskGraph): Task[] {
  const position = new Map<string, number>();
  graph.forEach((task, index) => {
    position.set(task.id, index);
  });
  const waitingOn = graph.map(
    (task) => new Set(task.dependencies.filter((dep) => dep !== task.id && position.has(dep))).size,
  );
  const dependents = new Map<string, number[]>();
  graph.forEach((task, index) => {
    for (const dep of new Set(task.dependencies)) {
      if (dep === task.id || !position.has(dep)) continue;
      const list = dependents.get(dep) ?? [];
      list.push(index);
      dependents.set(dep, list);
    }
  });
  const placed = new Array<boolean>(graph.length).fill(false);
  const order: Task[] = [];
  // Lists are short (a model's plan), so a linear scan for the first free task beats a heap.
  for (;;) {
    const next = waitingOn.findIndex((count, index) => count === 0 && !placed[index]);
    if (next === -1) break;
    placed[next] = true;
    order.push(graph[next]);
    for (const dependent of dependents.get(graph[next].id) ?? []) waitingOn[dependent] -= 1;
  }
  graph.forEach((task, index) => {
    if (!placed[index]) order.push(task);
  });
  return order;
}

/**
 * The first dependency cycle found, as a closed path (`['a', 'b', 'a']`), or undefined. The search
 * walks tasks in stored order and dependencies in listed order, so the cycle named is
 * deterministic. A self-reference is reported as the cycle `['a', 'a']`.
 */
export function findCycle(graph: TaskGraph): string[] | undefined {
  const byId = indexById(graph);
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (id: string): string[] | undefined => {
    const at = onPath.indexOf(id);
    if (at !== -1) return [...onPath.slice(at), id];
    if (done.has(id)) return undefined;
    const task = byId.get(id);
    if (task === undefined) return undefined;
    onPath.push(id);
    for (const dep of task.dependencies) {
      const cycle = visit(dep);
      if (cycle !== undefined) return cycle;
    }
    onPath.pop();
    done.add(id);
    return undefined;
  };
  for (const task of graph) {
    const cycle = visit(task.id);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

/** The full list in dependency order, each task with its derived blocked_by and ready. */
export function taskView(graph: TaskGraph): TaskView[] {
  const byId = indexById(graph);
  return dependencyOrder(graph).map((task) => {
    const blockedBy = incompleteDependencies(task, byId);
    return {
      id: task.id,
      content: task.content,
      status: task.status,
      dependencies: [...task.dependencies],
      blocked_by: blockedBy,
      ready: task.status === 'pending' && blockedBy.length === 0,
    };
  });
}
