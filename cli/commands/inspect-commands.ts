/** `status`, `list`, `watch` and `cancel`: commands about existing goals. */
import type { Client } from '@temporalio/client';
import { ConfigError } from '../../core/errors';
import type { SessionRow } from '../../store/types';
import { workflowIdOf } from '../../workflows/definitions';
import type { CliContext } from '../context';
import { EventStreamPrinter } from '../event-stream';
import { exitCodeOf } from '../exit-codes';
import { describeOutcome, followGoal } from '../follow';
import { type GoalRef, resolveSessionId } from '../goal-id';
import {
  loadStatus,
  modelNoteOf,
  type StatusView,
  statusText,
  viewOfRow,
  viewOfStart,
  WAITING_FOR_WORKER,
  waitingForWorker,
  workflowStatus,
} from '../goal-status';
import { formatDuration, formatSnapshot, notice, printJson, say } from '../output';
import { onInterrupt } from '../signals';
import { firstEvents, hasLiveWorker, noWorkerMessage, runningGoals } from '../worker-presence';
import { followOptions } from './goal-commands';

/** How often `cancel --wait` repeats that it is still waiting for a worker. */
const CANCEL_WAIT_REMINDER_MS = 30_000;

/** `goalrun status <id>`. */
export async function statusCommand(
  context: CliContext,
  id: string | undefined,
  options: { json?: boolean; last?: boolean },
): Promise<number> {
  const sessionId = await resolveSessionId(context, { id, last: options.last } satisfies GoalRef);
  const view = await loadStatus(context, sessionId);
  const modelNote = view.modelNote ?? modelNoteOf(view.model);
  if (options.json) {
    printJson({ ...view, ...(modelNote ? { modelNote } : {}) });
    return 0;
  }
  say(formatSnapshot({ ...view, modelNote }));
  if (view.status === WAITING_FOR_WORKER && view.taskQueue) {
    const client = await context.temporalIfRunning();
    if (client && (await hasLiveWorker(client, view.taskQueue)) === false) {
      notice(noWorkerMessage(view.taskQueue, context.workerHint()));
    }
  }
  return 0;
}

/** `goalrun list`: the newest goals first, including started goals no worker has picked up yet. */
export async function listCommand(
  context: CliContext,
  options: { json?: boolean; limit?: string },
): Promise<number> {
  const limit = options.limit ? Number(options.limit) : 20;
  if (!Number.isInteger(limit) || limit <= 0)
    throw new ConfigError(`--limit must be a positive whole number, got "${options.limit}"`);
  const store = await context.sessionStore();
  const rows = await store.listSessions(limit);
  const waiting = await waitingGoals(context, rows);
  const views = [
    ...rows.map((row) => ({ ...viewOfRow(row), createdAt: row.createdAt.toISOString() })),
    ...waiting,
  ]
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
    .slice(0, limit);
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
      `${view.sessionId}  ${statusText(view.status).padEnd(20)} ${String(view.steps).padStart(4)} ${view.steps === 1 ? 'step ' : 'steps'}  ${formatDuration(view.elapsedMs).padStart(8)}  ${objective}`,
    );
  }
  return 0;
}

/** Goals of this store's queue that Temporal runs but the store has no row for: nothing ran yet. */
async function waitingGoals(
  context: CliContext,
  rows: SessionRow[],
): Promise<Array<StatusView & { createdAt: string }>> {
  const client = await context.temporalIfRunning();
  if (!client) return [];
  const known = new Set(rows.map((row) => row.id));
  const store = await context.sessionStore();
  const views: Array<StatusView & { createdAt: string }> = [];
  const running = await runningGoals(client, await context.taskQueue()).catch(() => []);
  for (const goal of running) {
    if (known.has(goal.sessionId) || (await store.getSession(goal.sessionId))) continue;
    const first = await firstEvents(client, goal.workflowId).catch(() => null);
    if (!first) continue;
    const view = viewOfStart(goal.sessionId, first, first.pickedUp ? 'running' : WAITING_FOR_WORKER);
    views.push({ ...view, createdAt: goal.startedAt.toISOString() });
  }
  return views;
}

/** `goalrun watch <id>`: follow until the end; exit code as for `run`. */
export async function watchCommand(
  context: CliContext,
  id: string | undefined,
  options: { json?: boolean; last?: boolean; outputFormat?: string; fromStart?: boolean; after?: string },
): Promise<number> {
  const interrupted = onInterrupt();
  const sessionId = await resolveSessionId(context, { id, last: options.last });
  const follow = await followOptions(context, sessionId, options, interrupted, 'now');
  const client = await context.temporal();
  const status = await workflowStatus(client, sessionId);
  if (status === null) {
    // Temporal no longer knows the goal: what the store has is all there is.
    const view = await loadStatus(context, sessionId);
    if (follow.stream) {
      const printer = new EventStreamPrinter(
        await context.sessionStore(),
        sessionId,
        follow.stream.fromCursor,
      );
      await printer.poll(true);
      printer.finish(view);
    } else if (follow.json) printJson(view);
    else say(describeOutcome(view));
    return exitCodeOf(view.status);
  }
  return followGoal(context, sessionId, follow);
}

/** `goalrun cancel <id>`: the goal saves a checkpoint and a kept-progress summary, then stops. */
export async function cancelCommand(
  context: CliContext,
  id: string | undefined,
  options: { wait?: boolean; last?: boolean },
): Promise<number> {
  const sessionId = await resolveSessionId(context, { id, last: options.last });
  const client = await context.temporal();
  const status = await workflowStatus(client, sessionId);
  if (status === null)
    throw new ConfigError(`no goal with session or workflow id "${sessionId}" in Temporal`);
  if (status !== 'RUNNING') {
    say(`goal ${sessionId} is not running (${status.toLowerCase()}); nothing to cancel`);
    return 0;
  }
  const waiting = await waitingForWorker(client, sessionId);
  const handle = client.workflow.getHandle(workflowIdOf(sessionId));
  await handle.cancel();
  if (!waiting) {
    say(`cancellation requested for ${sessionId}; running tools are stopped and progress is saved`);
  } else {
    say(
      `cancellation requested for ${sessionId}; no worker has picked it up, so nothing ran: ` +
        'it ends as cancelled as soon as a worker picks it up',
    );
    if (waiting.taskQueue && (await hasLiveWorker(client, waiting.taskQueue)) === false) {
      notice(noWorkerMessage(waiting.taskQueue, context.workerHint()));
    }
  }
  if (options.wait) {
    await waitForEnd(client, sessionId, waiting?.taskQueue ?? null);
    say(formatSnapshot(await loadStatus(context, sessionId)));
  }
  return 0;
}

/** Waits for a cancelled goal to close, saying so when it waits for a worker rather than hanging silently. */
async function waitForEnd(client: Client, sessionId: string, waitingQueue: string | null): Promise<void> {
  const result = client.workflow
    .getHandle(workflowIdOf(sessionId))
    .result()
    .then(
      () => undefined,
      () => undefined,
    );
  if (!waitingQueue) return result;
  say(`waiting for a worker on task queue ${waitingQueue} to pick it up…`);
  const reminder = setInterval(() => {
    void hasLiveWorker(client, waitingQueue).then((live) => {
      say(
        live
          ? 'a worker is polling; waiting for it to end the goal…'
          : `still waiting for a worker on task queue ${waitingQueue}…`,
      );
    });
  }, CANCEL_WAIT_REMINDER_MS);
  try {
    await result;
  } finally {
    clearInterval(reminder);
  }
}
