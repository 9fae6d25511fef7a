/**
 * `status` and `list`: read-only, so they read Temporal through the HTTP API when one is known and
 * load neither the gRPC client nor the worker (issue 10; test/e2e/cli-module-graph.test.ts).
 */

import { agentLines } from '../../core/agents';
import { ConfigError } from '../../core/errors';
import { FINAL_STATUSES, type GoalDefinition } from '../../core/goal';
import { STUCK_TEXT } from '../../core/liveness';
import { usd } from '../../core/spend-cap';
import { terminalSafe } from '../../core/text';
import { workflowIdOf } from '../../core/workflow-names';
import type { SessionRow } from '../../store/types';
import type { CliContext } from '../context';
import { extensionsLines, extensionsView } from '../extensions-status';
import { type GoalRef, resolveSessionId } from '../goal-id';
import { goalLiveness } from '../goal-liveness';
import {
  loadStatus,
  modelNoteOf,
  recordedView,
  type StatusView,
  statusText,
  viewOfRow,
  viewOfStart,
  WAITING_FOR_WORKER,
  waitingView,
} from '../goal-status';
import { formatDuration, formatSnapshot, notice, printJson, say } from '../output';
import { LISTED_OBJECTIVE_COLUMNS } from '../session-summary';
import { shortIdFor, shortIdsFor } from '../short-ids';
import { clipToWidth } from '../terminal-text';
import { firstEvents, hasLiveWorker, noWorkerMessage, runningGoals } from '../worker-presence';

/** `goalrun status <id>`. */
export async function statusCommand(
  context: CliContext,
  id: string | undefined,
  options: { json?: boolean; last?: boolean },
): Promise<number> {
  context.prepareTemporalReader();
  const sessionId = await resolveSessionId(context, { id, last: options.last } satisfies GoalRef);
  const row = await (await context.sessionStore()).getSession(sessionId);
  const cleaned = row?.cleanedAt;
  if (cleaned) {
    // `goalrun clean` removed its transcript; the catalog row says when (issue 17).
    const shortId = await shortIdFor(context, sessionId);
    if (options.json) printJson({ sessionId, shortId, status: 'cleaned', cleanedAt: cleaned.toISOString() });
    else
      say(
        `goal ${shortId} (${sessionId}) was cleaned at ${cleaned.toISOString()}: its transcript, events and checkpoints were removed`,
      );
    return 0;
  }
  const view = { ...(await loadStatus(context, sessionId)), shortId: await shortIdFor(context, sessionId) };
  const modelNote = view.modelNote ?? modelNoteOf(view.model, { home: context.settings.home });
  const extensions = await extensionsView(await context.sessionStore(), sessionId).catch(() => null);
  const worktree = (row?.goalState as { goal?: GoalDefinition } | null)?.goal?.worktree;
  if (options.json) {
    printJson({
      ...view,
      ...(modelNote ? { modelNote } : {}),
      ...(extensions ? { extensions } : {}),
      ...(worktree ? { worktree } : {}),
    });
    return 0;
  }
  say(
    formatSnapshot({
      ...view,
      modelNote,
      extraLines: [
        ...(view.build ? [`build      ${view.build} (Worker Deployment goalrun)`] : []),
        ...(worktree ? [`worktree   branch ${worktree.branch} of ${worktree.repository}`] : []),
        ...(view.status === 'paused' ? [`go on      ${pausedNextCommand(sessionId, view.reason)}`] : []),
        ...(extensions ? extensionsLines(extensions) : []),
        // Each sub-agent with its cost (included in the goal's), and a sub-agent's parent (issue 27 §2).
        ...agentLines(view.agents, view.parent),
      ],
    }),
  );
  if (view.status === WAITING_FOR_WORKER && view.taskQueue) {
    const reader = await context.temporalReader();
    if (reader && (await hasLiveWorker(reader, view.taskQueue)) === false) {
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
  context.prepareTemporalReader();
  const store = await context.sessionStore();
  const rows = await store.listSessions(limit);
  const waiting = await waitingGoals(context, rows);
  const views = [
    ...(await Promise.all(
      rows.map(async (row) => {
        const view = await listedView(context, row);
        const name = row.name ?? view.name ?? undefined;
        return { ...view, ...(name ? { name } : {}), createdAt: row.createdAt.toISOString() };
      }),
    )),
    ...waiting,
  ];
  const ids = views.map((view) => view.sessionId);
  const shortIds = await shortIdsFor(store, ids, ids);
  const listed = views
    .map((view) => ({ ...view, shortId: shortIds.get(view.sessionId) ?? view.sessionId }))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
    .slice(0, limit);
  if (options.json) {
    printJson(listed);
    return 0;
  }
  if (listed.length === 0) {
    say(`no goals yet in ${context.describeStore()}; start one with: goalrun run "<objective>"`);
    return 0;
  }
  // Short ids that grew past the fewest digits still line up.
  const idWidth = Math.max(...listed.map((view) => view.shortId.length));
  for (const view of listed) {
    const clipped = clipToWidth(terminalSafe(view.objective), LISTED_OBJECTIVE_COLUMNS);
    // A goal with a money cap shows what it spent of it.
    const objective =
      view.budget?.capUsd != null
        ? `[${usd(view.budget.spentUsd)} of ${usd(view.budget.capUsd)}] ${clipped}`
        : clipped;
    // The short id, as every command prints and takes it (cli/short-ids.ts); the name before the objective.
    const title = view.name ? `[${view.name}] ${objective}` : objective;
    say(
      `${view.shortId.padEnd(idWidth)}  ${listStatus(view).padEnd(20)} ${String(view.steps).padStart(4)} ${view.steps === 1 ? 'step ' : 'steps'}  ${formatDuration(view.elapsedMs).padStart(8)}  ${title}`,
    );
  }
  return 0;
}

/** A goal's status in the list: how its liveness shows it, or its status. */
function listStatus(view: StatusView): string {
  const { liveness } = view;
  if (liveness?.stuck) return `${STUCK_TEXT} (${liveness.stuck})`;
  if (liveness?.waitingForWorkerSince) return statusText(WAITING_FOR_WORKER);
  if (liveness?.stalled) return 'stalled';
  // A completion whose checks passed says so (issue 27): a bare `completed` was the model's word alone.
  if (view.status === 'completed' && view.verified) return 'completed verified';
  return statusText(view.status);
}

/**
 * The view of a listed goal: its last recorded state, and for a goal that is still running, whether
 * a worker serves it, whether it is stuck or stalled, with its clock running.
 */
async function listedView(context: CliContext, row: SessionRow): Promise<StatusView> {
  const view = viewOfRow(row);
  const reader = await context.temporalReader();
  // A goal whose row says it ended may have been resumed since: Temporal says whether it runs.
  const summary = reader ? await reader.describe(workflowIdOf(row.id)).catch(() => null) : null;
  if (!reader || summary?.status !== 'RUNNING') return view;
  // As `status` says it: an execution no worker has picked up waits for a worker, whatever the
  // queue's pollers (a foreground process that is gone stays listed as a poller for a while).
  const first = await firstEvents(reader, workflowIdOf(row.id)).catch(() => null);
  if (first && !first.pickedUp) return waitingView(row.id, first, row);
  if (FINAL_STATUSES.includes(row.status)) return view;
  const liveness = await goalLiveness(reader, {
    sessionId: row.id,
    status: view.status,
    summary,
    store: await context.sessionStore(),
    runStartedMs: first?.startedAt?.getTime() ?? null,
    stalledAfterMinutes: context.settings.config.stalled_after_minutes,
  }).catch(() => undefined);
  return { ...recordedView(row), ...(liveness ? { liveness } : {}) };
}

/** Goals of this store's queue that Temporal runs but the store has no row for: nothing ran yet. */
async function waitingGoals(
  context: CliContext,
  rows: SessionRow[],
): Promise<Array<StatusView & { createdAt: string }>> {
  const reader = await context.temporalReader();
  if (!reader) return [];
  const known = new Set(rows.map((row) => row.id));
  const store = await context.sessionStore();
  const views: Array<StatusView & { createdAt: string }> = [];
  const running = await runningGoals(reader, await context.taskQueue()).catch(() => []);
  for (const goal of running) {
    if (known.has(goal.sessionId) || (await store.getSession(goal.sessionId))) continue;
    const first = await firstEvents(reader, goal.workflowId).catch(() => null);
    if (!first) continue;
    const view = viewOfStart(goal.sessionId, first, first.pickedUp ? 'running' : WAITING_FOR_WORKER);
    // A goal a worker picked up but that wrote no row: a worker that cannot run it, say why.
    const summary = first.pickedUp ? await reader.describe(goal.workflowId).catch(() => null) : null;
    const liveness =
      summary?.status === 'RUNNING'
        ? await goalLiveness(reader, {
            sessionId: goal.sessionId,
            status: view.status,
            summary,
            store,
            runStartedMs: first.startedAt?.getTime() ?? null,
            stalledAfterMinutes: context.settings.config.stalled_after_minutes,
          }).catch(() => undefined)
        : undefined;
    views.push({ ...view, ...(liveness ? { liveness } : {}), createdAt: goal.startedAt.toISOString() });
  }
  return views;
}

/** The command that moves a paused goal on; a breaker pause also goes on at a steering message. */
export function pausedNextCommand(sessionId: string, reason: string | null | undefined): string {
  const unpause = `goalrun unpause ${sessionId}`;
  return reason?.startsWith('runaway breaker:')
    ? `${unpause} (or goalrun steer ${sessionId} "…": a message to a goal the breaker paused lets it go on)`
    : unpause;
}
