/** `goalrun tasks <id>`: the goal's task graph with status, blocked_by and ready. */

import { type TaskHolders, withHolders } from '../../core/agent-tasks';
import {
  renderTaskList,
  summarizeTaskList,
  type TaskGraph,
  type TaskView,
  taskView,
} from '../../core/task-graph';
import { TASKS_QUERY, workflowIdOf } from '../../core/workflow-names';
import type { CliContext } from '../context';
import { resolveSessionId } from '../goal-id';
import { loadStatus, queryWithTimeout, workflowStatus } from '../goal-status';
import { printJson, say } from '../output';
import { reportWaiting } from './context-commands';

/** The task graph of a goal (by resolved session id): live while it runs, else from its latest checkpoint. */
export async function loadTasks(context: CliContext, sessionId: string): Promise<TaskView[]> {
  const reader = await context.temporalReader();
  if (reader && (await workflowStatus(reader, sessionId)) === 'RUNNING') {
    const live = await queryWithTimeout(() => reader.query(workflowIdOf(sessionId), TASKS_QUERY));
    if (live) return live;
  }
  // Throws the "no goal" error for a goal neither the store nor Temporal knows.
  await loadStatus(context, sessionId);
  const store = await context.sessionStore();
  const checkpoint = await store.latestCheckpoint(sessionId);
  // Which sub-agent holds which task (issue 27 §2), from the saved state.
  const saved = (await store.getSession(sessionId))?.goalState as { taskHolders?: TaskHolders } | null;
  return withHolders(taskView((checkpoint?.tasks as TaskGraph | null) ?? []), saved?.taskHolders);
}

/** `goalrun tasks <id> [--json]`. */
export async function tasksCommand(
  context: CliContext,
  id: string | undefined,
  options: { json?: boolean; last?: boolean },
): Promise<number> {
  context.prepareTemporalReader();
  const sessionId = await resolveSessionId(context, { id, last: options.last });
  if (await reportWaiting(context, sessionId, 'task list', [], options.json)) return 0;
  const view = await loadTasks(context, sessionId);
  if (options.json) {
    printJson(view);
    return 0;
  }
  say(summarizeTaskList(view));
  if (view.length > 0) say(renderTaskList(view));
  for (const task of view as Array<TaskView & { agent?: string }>) {
    if (task.agent) say(`${task.id} is held by sub-agent ${task.agent}`);
  }
  return 0;
}
