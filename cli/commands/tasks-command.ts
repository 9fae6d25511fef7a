/** `goalrun tasks <id>`: the goal's task graph with status, blocked_by and ready. */

import { ConfigError } from '../../core/errors';
import {
  renderTaskList,
  summarizeTaskList,
  type TaskGraph,
  type TaskView,
  taskView,
} from '../../core/task-graph';
import { sessionIdOf, tasksQuery, workflowIdOf } from '../../workflows/definitions';
import type { CliContext } from '../context';
import { workflowStatus } from '../goal-status';
import { printJson, say } from '../output';

/** How long the live `tasks` query may take before the CLI reads the store instead. */
const QUERY_TIMEOUT_MS = 5_000;

/** The task graph of a goal: live while it runs, else from its latest checkpoint. */
export async function loadTasks(context: CliContext, id: string): Promise<TaskView[]> {
  const sessionId = sessionIdOf(id.trim());
  const client = await context.temporalIfRunning();
  if (client && (await workflowStatus(client, sessionId)) === 'RUNNING') {
    const handle = client.workflow.getHandle(workflowIdOf(sessionId));
    let timer: NodeJS.Timeout | undefined;
    const live = await Promise.race([
      handle.query(tasksQuery).catch(() => null),
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), QUERY_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (live) return live;
  }
  const store = await context.sessionStore();
  const row = await store.findSession(id.trim());
  if (!row) throw new ConfigError(`no goal with session or workflow id "${id}"`);
  const checkpoint = await store.latestCheckpoint(row.id);
  return taskView((checkpoint?.tasks as TaskGraph | null) ?? []);
}

/** `goalrun tasks <id> [--json]`. */
export async function tasksCommand(
  context: CliContext,
  id: string,
  options: { json?: boolean },
): Promise<number> {
  const view = await loadTasks(context, id);
  if (options.json) {
    printJson(view);
    return 0;
  }
  say(summarizeTaskList(view));
  if (view.length > 0) say(renderTaskList(view));
  return 0;
}
