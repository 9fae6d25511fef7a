/** `status`, `list`, `watch` and `cancel`: commands about existing goals. */
import { ConfigError } from '../../core/errors';
import { sessionIdOf, workflowIdOf } from '../../workflows/definitions';
import type { CliContext } from '../context';
import { exitCodeOf } from '../exit-codes';
import { describeOutcome, followGoal } from '../follow';
import { loadStatus, viewOfRow, workflowStatus } from '../goal-status';
import { formatDuration, formatSnapshot, printJson, say } from '../output';
import { onInterrupt } from './goal-commands';

/** `goalrun status <id>`. */
export async function statusCommand(
  context: CliContext,
  id: string,
  options: { json?: boolean },
): Promise<number> {
  const view = await loadStatus(context, id);
  if (options.json) printJson(view);
  else say(formatSnapshot(view));
  return 0;
}

/** `goalrun list`: the newest sessions first. */
export async function listCommand(
  context: CliContext,
  options: { json?: boolean; limit?: string },
): Promise<number> {
  const limit = options.limit ? Number(options.limit) : 20;
  if (!Number.isInteger(limit) || limit <= 0)
    throw new ConfigError(`--limit must be a positive whole number, got "${options.limit}"`);
  const store = await context.sessionStore();
  const rows = await store.listSessions(limit);
  const views = rows.map((row) => ({
    ...viewOfRow(row),
    createdAt: row.createdAt.toISOString(),
  }));
  if (options.json) {
    printJson(views);
    return 0;
  }
  if (views.length === 0) {
    say(`no goals yet in ${context.describeStore()}; start one with: goalrun run "<objective>"`);
    return 0;
  }
  for (const view of views) {
    const objective = view.objective.length > 60 ? `${view.objective.slice(0, 59)}…` : view.objective;
    say(
      `${view.sessionId}  ${view.status.padEnd(13)} ${String(view.steps).padStart(4)} steps  ${formatDuration(view.elapsedMs).padStart(8)}  ${objective}`,
    );
  }
  return 0;
}

/** `goalrun watch <id>`: follow until the end; exit code as for `run`. */
export async function watchCommand(
  context: CliContext,
  id: string,
  options: { json?: boolean },
): Promise<number> {
  const sessionId = sessionIdOf(id.trim());
  const client = await context.temporal();
  const status = await workflowStatus(client, sessionId);
  if (status === null) {
    const view = await loadStatus(context, id);
    if (options.json) printJson(view);
    else say(describeOutcome(view));
    return exitCodeOf(view.status);
  }
  return followGoal(context, sessionId, { json: options.json, interrupted: onInterrupt() });
}

/** `goalrun cancel <id>`: the goal saves a checkpoint and a kept-progress summary, then stops. */
export async function cancelCommand(
  context: CliContext,
  id: string,
  options: { wait?: boolean },
): Promise<number> {
  const sessionId = sessionIdOf(id.trim());
  const client = await context.temporal();
  const status = await workflowStatus(client, sessionId);
  if (status === null) throw new ConfigError(`no goal with session or workflow id "${id}"`);
  if (status !== 'RUNNING') {
    say(`goal ${sessionId} is not running (${status.toLowerCase()}); nothing to cancel`);
    return 0;
  }
  const handle = client.workflow.getHandle(workflowIdOf(sessionId));
  await handle.cancel();
  say(`cancellation requested for ${sessionId}; running tools are stopped and progress is saved`);
  if (options.wait) {
    await handle.result().catch(() => undefined);
    say(formatSnapshot(await loadStatus(context, sessionId)));
  }
  return 0;
}
