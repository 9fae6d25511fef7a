/**
 * A sub-agent's claims on its parent's task graph (issue 27 §2, spec S-TASKS): a child's todo-write
 * reaches its parent by signal, and the parent's command queue applies it in arrival order with the
 * sub-agent merge semantics (a full list is merged, never a wipe of the parent's list). A task the
 * child sets in_progress or completed is held by it (state.taskHolders), which the graph shows; a task
 * another running agent holds cannot be claimed. Pure.
 */
import type { AgentRecord } from './agents';
import { applyTodoWrite } from './task-graph';
import type { TodoWriteArgs } from './task-graph-args';
import type { TaskGraph } from './task-graph-types';

/** Who holds which task: task id → agent id. */
export type TaskHolders = Record<string, string>;

/** A child's todo-write as its parent receives it. */
export interface AgentTasksRequest {
  /** Unique per call: the child's session and tool call. */
  id: string;
  agentId: string;
  args: TodoWriteArgs;
}

/** What applying a child's claim came to. */
export interface AgentClaimOutcome {
  tasks: TaskGraph;
  holders: TaskHolders;
  ok: boolean;
  /** One line for the parent's activity log. */
  text: string;
}

/** Applies a child's todo-write to the parent's graph, or refuses it whole (nothing changed). */
export function applyAgentClaim(
  tasks: TaskGraph,
  holders: TaskHolders,
  agents: readonly AgentRecord[],
  request: AgentTasksRequest,
): AgentClaimOutcome {
  const running = new Set(agents.filter((agent) => agent.status === 'running').map((agent) => agent.agentId));
  const todos = request.args.todos ?? [];
  const taken = todos.filter((todo) => {
    if (todo.id === undefined) return false;
    const holder = holders[todo.id];
    return holder !== undefined && holder !== request.agentId && running.has(holder);
  });
  if (taken.length > 0) {
    const named = taken.map((todo) => `${todo.id} (held by ${holders[todo.id!]})`).join(', ');
    return { tasks, holders, ok: false, text: `${request.agentId}'s claim refused: ${named}` };
  }
  const outcome = applyTodoWrite(tasks, { ok: true, args: request.args, notes: [] }, { subAgent: true });
  if (!outcome.ok) {
    return { tasks, holders, ok: false, text: `${request.agentId}'s task update refused: ${outcome.result}` };
  }
  const next: TaskHolders = {};
  const ids = new Set(outcome.graph.map((task) => task.id));
  for (const [id, holder] of Object.entries(holders)) if (ids.has(id)) next[id] = holder;
  const claimed: string[] = [];
  for (const todo of todos) {
    if (todo.id === undefined || !ids.has(todo.id)) continue;
    if (todo.status === 'in_progress' || todo.status === 'completed') {
      next[todo.id] = request.agentId;
      claimed.push(`${todo.id} ${todo.status}`);
    } else if (todo.status === 'pending' && next[todo.id] === request.agentId) {
      delete next[todo.id];
    }
  }
  const text =
    claimed.length > 0
      ? `${request.agentId}: ${claimed.join(', ')}`
      : `${request.agentId} updated the task list`;
  return { tasks: outcome.graph, holders: next, ok: true, text };
}

/** The task views with who holds each (for the graph the user sees). */
export function withHolders<T extends { id: string }>(
  views: T[],
  holders: TaskHolders | undefined,
): Array<T & { agent?: string }> {
  if (!holders) return views;
  return views.map((view) => (holders[view.id] ? { ...view, agent: holders[view.id] } : view));
}
