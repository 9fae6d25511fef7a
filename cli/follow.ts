/**
 * Follows a goal live until it ends: prints its actions as they happen, keeps a live line of the
 * call in progress (see live-line.ts), then prints the outcome. Ctrl-C stops following; the goal
 * goes on in Temporal.
 */

import type { WorkflowHandle } from '@temporalio/client';
import { FINAL_STATUSES } from '../core/goal';
import type { Liveness } from '../core/liveness';
import { plural } from '../core/text';
import { workflowIdOf } from '../workflows/definitions';
import { ActivityProgressReader } from './activity-progress';
import type { CliContext } from './context';
import { EventStreamPrinter } from './event-stream';
import { exitCodeOf } from './exit-codes';
import { goalLiveness } from './goal-liveness';
import { goalResult } from './goal-result';
import { CLOSED_STATUS, loadStatus, queryState, type StatusView, statusText } from './goal-status';
import { limitOfReason, raiseBudgetAdvice, raiseLimitAdvice } from './limit-hint';
import { LiveLine } from './live-line';
import { approvalPrompt, formatDuration, livenessStatus, notice, printJson, say } from './output';
import { StreamLease } from './partial-messages';
import { signalExitCode } from './signals';
import { readerOf } from './temporal-reader';
import { firstEvents, hasLiveWorker, noWorkerMessage } from './worker-presence';

/** How often the CLI asks a running goal for news. */
const POLL_INTERVAL_MS = 700;

/** How often (in polls) a follower checks whether a worker serves the goal: a few Temporal calls. */
const LIVENESS_EVERY_POLLS = 7;

/**
 * How long a follower that hosts the worker waits, after the goal's final status, for its execution
 * to close (the last save and the close are workflow tasks of that worker). Beyond it, it leaves.
 */
const HOSTED_CLOSE_WAIT_MS = 60_000;

/** Final statuses at which the execution stays open, waiting for /limits to raise the limit. */
const OPEN_AT_STATUSES: readonly string[] = ['limit_reached', 'budget_reached'];

/** Options of followGoal. */
export interface FollowOptions {
  json?: boolean;
  /**
   * stream-json: print the event log from this cursor instead of live lines. `awaitInit`: this
   * command started the execution (a run, a resume), so the stream opens with the init it logs.
   */
  stream?: { fromCursor: number; awaitInit?: boolean; partialMessages?: boolean };
  /** Resolves with the signal when the user presses Ctrl-C (or the process gets SIGTERM). */
  interrupted?: Promise<NodeJS.Signals>;
  /** Recent actions up to this number were shown before (a resumed goal's earlier run): not again. */
  shownUpTo?: number;
}

/** Follows the goal of a session until it ends or the user interrupts; returns the exit code. */
export async function followGoal(
  context: CliContext,
  sessionId: string,
  options: FollowOptions = {},
): Promise<number> {
  const client = await context.temporal();
  const workflowId = workflowIdOf(sessionId);
  const handle = client.workflow.getHandle(workflowId);
  let signal: NodeJS.Signals | null = null;
  options.interrupted?.then((received) => {
    signal = received;
  });
  const json = options.json === true || options.stream !== undefined;
  const live = json ? null : new LiveLine(process.stdout);
  const store = options.stream ? await context.sessionStore() : null;
  const partialMessages = options.stream?.partialMessages === true;
  const printer =
    store && options.stream
      ? new EventStreamPrinter(store, sessionId, options.stream.fromCursor, undefined, { partialMessages })
      : null;
  // While it follows, it asks the goal's model steps to write their text as it streams in.
  const lease = store && partialMessages ? new StreamLease(store, sessionId) : null;
  // A run from the start, or a resume, opens with the goal's own init; a late watch with one made now.
  printer?.openWith(() => loadStatus(context, sessionId), options.stream?.awaitInit === true);
  const progress = new ActivityProgressReader(client, workflowId);
  let printed = options.shownUpTo ?? 0;
  let temporalStatus = 'RUNNING';
  let pickedUp = false;
  let checkedWorkers = false;
  let waitingSince: Date | null = null;
  /** When the followed run started: the stall clock starts no earlier (core/liveness.ts). */
  let runStartedMs: number | null = null;
  let announcedApproval: string | null = null;
  let polls = 0;
  let livenessSaid = '';
  let liveness: Liveness | undefined;
  let finalSince: number | null = null;
  while (!signal) {
    await lease?.renew();
    const description = await handle.describe();
    temporalStatus = description.status.name;
    if (temporalStatus !== 'RUNNING') break;
    if (!checkedWorkers) {
      checkedWorkers = true;
      if (!context.hostsWorker && (await hasLiveWorker(client, description.taskQueue)) === false) {
        live?.clear();
        notice(noWorkerMessage(description.taskQueue, context.workerHint()));
      }
    }
    if (!pickedUp) {
      const first = await firstEvents(client, workflowId).catch(() => null);
      pickedUp = first?.pickedUp ?? true;
      waitingSince = first?.startedAt ?? null;
      runStartedMs = waitingSince?.getTime() ?? null;
    }
    if (live && !pickedUp) {
      live.update(
        {
          step: 0,
          // The hosted worker picks the goal up within moments; only a missing worker means waiting.
          label: context.hostsWorker ? 'starting' : 'waiting for a worker',
          since: waitingSince,
          attempt: 1,
          lastFailure: null,
        },
        'waiting',
      );
    }
    const state = pickedUp ? await queryState(handle) : null;
    if (pickedUp && polls++ % LIVENESS_EVERY_POLLS === 0) {
      liveness = await followedLiveness(context, sessionId, state?.status ?? 'running', runStartedMs);
      // Said once per change: a dead worker, a build that cannot run the goal, a goal that stalled.
      const said = liveness ? livenessStatus('running', liveness) : 'running';
      if (said !== livenessSaid && (livenessSaid !== '' || said !== 'running')) {
        livenessSaid = said;
        const line = said === 'running' ? 'a worker is serving the goal again' : said;
        if (live) live.print(`  ${line}`);
        else notice(line);
      }
    }
    // A goal at a limit keeps its workflow open for /limits; for a follower it has ended.
    if (state && FINAL_STATUSES.includes(state.status)) {
      if (live) {
        for (const action of state.recent) if (action.n > printed) live.print(`  ${action.text}`);
        printed = Math.max(printed, ...state.recent.map((action) => action.n));
      }
      // This process's worker has still to close the execution: leaving first would leave the goal
      // open with no worker (shown as waiting for one), however fast it reached its end.
      finalSince ??= Date.now();
      const closing =
        context.hostsWorker &&
        !OPEN_AT_STATUSES.includes(state.status) &&
        Date.now() - finalSince < HOSTED_CLOSE_WAIT_MS;
      if (!closing) break;
      await printer?.poll();
      await Promise.race([sleep(POLL_INTERVAL_MS), options.interrupted ?? new Promise(() => undefined)]);
      continue;
    }
    if (live && pickedUp) {
      for (const action of state?.recent ?? []) {
        if (action.n > printed) live.print(`  ${action.text}`);
      }
      printed = Math.max(printed, ...(state?.recent ?? []).map((action) => action.n));
      // An escalation waits for a person: say once what it is, why, and how to answer it.
      if (state?.approval && state.approval.toolCallId !== announcedApproval) {
        announcedApproval = state.approval.toolCallId;
        live.print(approvalPrompt(sessionId, state.approval));
      }
      const call = await progress.current(description.raw.pendingActivities, description.runId);
      const since = liveness?.waitingForWorkerSince;
      live.update(
        since
          ? {
              step: state?.steps ?? 0,
              label: 'waiting for a worker',
              since: new Date(since),
              attempt: 1,
              lastFailure: null,
            }
          : call && { step: state?.steps ?? 0, ...call },
        since ? 'waiting' : (call?.activityId ?? ''),
      );
    }
    await printer?.poll();
    await Promise.race([sleep(POLL_INTERVAL_MS), options.interrupted ?? new Promise(() => undefined)]);
  }
  live?.clear();
  if (signal) return stopFollowing(context, sessionId, signal, json, printer);
  const final = await finalStatus(context, sessionId, temporalStatus, handle);
  if (printer) {
    await printer.poll(true);
    printer.finish(final);
  } else if (json) {
    printJson(final);
  } else {
    for (const action of final.recent) if (action.n > printed) say(`  ${action.text}`);
    say(describeOutcome(final));
  }
  return exitCodeOf(final.status);
}

/**
 * Ctrl-C: in text mode, say how to watch, resume or cancel; in JSON mode, print the goal's current
 * status object on stdout and nothing else (the advice goes to stderr).
 */
async function stopFollowing(
  context: CliContext,
  sessionId: string,
  signal: NodeJS.Signals,
  json: boolean,
  printer: EventStreamPrinter | null = null,
): Promise<number> {
  const advice = [
    'Stopped following. The goal keeps its state in Temporal; nothing is lost.',
    `  watch it:   goalrun watch ${sessionId}`,
    `  resume it:  goalrun resume ${sessionId}   (hosts a worker and follows it)`,
    `  cancel it:  goalrun cancel ${sessionId}`,
  ];
  if (json) {
    const view = await loadStatus(context, sessionId).catch((err: Error) => {
      notice(`could not read the goal's status: ${err.message}`);
      return null;
    });
    if (view && printer) {
      await printer.poll(true);
      printer.finish(view);
    } else if (view) printJson(view);
    for (const line of advice) process.stderr.write(`${line}\n`);
  } else {
    say('');
    for (const line of advice) say(line);
  }
  return signalExitCode(signal);
}

/** The final status of a closed goal; Temporal's closed state wins over a stale checkpoint. */
async function finalStatus(
  context: CliContext,
  sessionId: string,
  temporalStatus: string,
  handle: WorkflowHandle,
): Promise<StatusView> {
  const view = await loadStatus(context, sessionId);
  if (view.status === 'running') {
    // The run's own result, or the snapshot its GoalBlocked / GoalFailed failure carries, says how it ended.
    const result = await goalResult(handle).catch(() => null);
    if (result && result.status !== 'running') return { ...view, ...result };
    const status = CLOSED_STATUS[temporalStatus] ?? 'failed';
    notice(`the workflow ended as ${temporalStatus} without a final checkpoint`);
    return { ...view, status, reason: view.reason ?? `workflow ${temporalStatus.toLowerCase()}` };
  }
  return view;
}

/** One paragraph on how a goal ended, and how to go on where that makes sense. */
export function describeOutcome(view: StatusView): string {
  const lines = [
    `goal ${statusText(view.status)}${view.reason ? `: ${view.reason}` : ''} — ${plural(view.steps, 'step')}, ${plural(view.iteration, 'iteration')}, ${formatDuration(view.elapsedMs)}, ${plural(view.usage.totalTokens, 'token')}`,
  ];
  if (view.finishSummary) lines.push(`summary: ${view.finishSummary}`);
  if (view.status === 'limit_reached') {
    const kind = limitOfReason(view.reason);
    const value = Number(/\((\d+)/.exec(view.reason ?? '')?.[1] ?? 0);
    if (kind) lines.push(raiseLimitAdvice(view.sessionId, kind, Math.max(value, 1) * 2));
  } else if (view.status === 'budget_reached') {
    lines.push(raiseBudgetAdvice(view.sessionId, view.reason));
  } else if (view.status === 'cleared') {
    // The reason names the fresh session; say how to follow it.
    const next = /session (\S+)$/.exec(view.reason ?? '')?.[1];
    if (next) lines.push(`the goal goes on in session ${next}: goalrun watch ${next}`);
  } else if (view.status === 'cancelled' || view.status === 'blocked') {
    lines.push(`resume with: goalrun resume ${view.sessionId}`);
  }
  return lines.join('\n');
}

/** The liveness of a followed goal, or undefined when it cannot be read (advice only). */
async function followedLiveness(
  context: CliContext,
  sessionId: string,
  status: string,
  runStartedMs: number | null,
): Promise<Liveness | undefined> {
  try {
    const client = await context.temporal();
    const summary = await readerOf(client).describe(workflowIdOf(sessionId));
    if (summary?.status !== 'RUNNING') return undefined;
    return await goalLiveness(client, {
      sessionId,
      status,
      summary,
      store: await context.sessionStore(),
      runStartedMs,
      stalledAfterMinutes: context.settings.config.stalled_after_minutes,
    });
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
