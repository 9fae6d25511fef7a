/** `run`, `start` and `resume`: commands that start a goal execution. */

import { setTimeout as delay } from 'node:timers/promises';
import { ConfigError } from '../../core/errors';
import type { GoalDefinition, GoalLimits } from '../../core/goal';
import { DEFAULT_SANDBOX } from '../../core/sandbox-settings';
import { newSessionId } from '../../store/session-id';
import { hostUpdate, workflowIdOf } from '../../workflows/definitions';
import { innermostMessage } from '../../workflows/failures';
import type { CliContext } from '../context';
import { type FollowOptions, followGoal } from '../follow';
import { goalFromOptions } from '../goal-definition';
import { type GoalOptions, limitsFromFlags } from '../goal-options';
import { modelNoteOf, queryState, snapshotFromRow, workflowStatus } from '../goal-status';
import { writableFile, writeLastMessage } from '../last-message';
import { describeLimit, LIMITS, limitHit, limitOfReason, raisedLimit, raiseLimitAdvice } from '../limit-hint';
import { claimNamedSession } from '../named-start';
import { objectiveFrom } from '../objective-input';
import { notice, printJson, say } from '../output';
import { outputFormatOf } from '../output-format';
import { sessionToResume } from '../resume-target';
import { requireSandbox } from '../sandbox-check';
import { type HeldSessionLock, lockSession } from '../session-lock';
import { onInterrupt } from '../signals';
import { type StartedGoal, startGoal } from '../start-goal';
import { senderName, steerGoal } from '../steer-client';
import { webUiUrl } from '../web-ui';
import {
  firstEvents,
  hasLiveToolHost,
  hasLiveWorker,
  noToolHostMessage,
  noWorkerMessage,
} from '../worker-presence';
import { describe as describeSteering } from './steer-commands';

/** Options of `resume`, besides the limits. */
export interface ResumeOptions extends GoalOptions {
  /** A new instruction for a stopped (or completed) goal. */
  message?: string;
  /** Resume a completed goal without a new instruction. */
  force?: boolean;
  last?: boolean;
}

/**
 * Refuses (exit 2) a goal whose sandbox needs bubblewrap when this machine cannot sandbox. A goal
 * with a tool host (--tools-queue) is not checked here: its tools run there, and that worker checks.
 */
async function requireSandboxForGoal(goal: GoalDefinition): Promise<void> {
  if (goal.toolTaskQueue === undefined) await requireSandbox(goal.sandbox?.mode ?? DEFAULT_SANDBOX.mode);
}

/** `goalrun run`: start a goal, host a worker unless --no-worker, follow it to the end. */
export async function runCommand(
  context: CliContext,
  objectiveArg: string,
  options: GoalOptions & { name?: string },
): Promise<number> {
  const interrupted = onInterrupt();
  const hostsWorker = options.worker !== false;
  const objective = objectiveFrom(objectiveArg);
  // Checked before the goal starts: a typo in the path must not cost a whole run.
  const lastMessageFile = options.outputLastMessage ? writableFile(options.outputLastMessage) : undefined;
  const sessionId = newSessionId(options.workspace ?? process.cwd(), new Date());
  const goal = goalFromOptions(objective, options, context.settings, sessionId, hostsWorker);
  // Before a name is claimed: a machine that cannot sandbox the goal starts nothing.
  await requireSandboxForGoal(goal);
  if (options.name !== undefined) {
    const claim = await claimNamedSession(context, options.name, objective, options, hostsWorker);
    try {
      if (claim.kind === 'continue') {
        return await resumeSession(
          context,
          claim.sessionId,
          { ...options, message: objective },
          interrupted,
          claim.lock,
        );
      }
      return await runGoal(context, claim.goal, options, interrupted, claim.lock, lastMessageFile);
    } finally {
      await claim.lock.release();
    }
  }
  return runGoal(context, goal, options, interrupted, undefined, lastMessageFile);
}

/** Starts a new goal with a worker here (unless --no-worker) and follows it. */
async function runGoal(
  context: CliContext,
  goal: GoalDefinition,
  options: GoalOptions,
  interrupted: Promise<NodeJS.Signals>,
  lock?: HeldSessionLock,
  lastMessageFile?: string,
): Promise<number> {
  const hostsWorker = options.worker !== false;
  const follow = await followOptions(context, goal.sessionId, options, interrupted, 'start');
  if (hostsWorker) await context.hostWorker();
  const started = await startGoal(context, goal);
  await lock?.release();
  if (!follow.json) announce(started.sessionId, context, goal.model, goal.workspace);
  noteModel(goal.model, { home: context.settings.home, workspace: goal.workspace });
  await warnIfNoToolHost(context, goal);
  const code = await followGoal(context, started.sessionId, follow);
  if (lastMessageFile) await writeLastMessage(context, started.sessionId, lastMessageFile);
  return code;
}

/** `goalrun start`: start a goal and return at once. */
export async function startCommand(
  context: CliContext,
  objectiveArg: string,
  options: GoalOptions & { name?: string },
): Promise<number> {
  const objective = objectiveFrom(objectiveArg);
  const sessionId = newSessionId(options.workspace ?? process.cwd(), new Date());
  const goal = goalFromOptions(objective, options, context.settings, sessionId, false);
  await requireSandboxForGoal(goal);
  if (options.name !== undefined) {
    const claim = await claimNamedSession(context, options.name, objective, options, false);
    try {
      if (claim.kind === 'continue') {
        const resumeOptions = { ...options, message: objective, worker: false };
        return await resumeSession(context, claim.sessionId, resumeOptions, onInterrupt(), claim.lock, false);
      }
      const started = await startGoal(context, claim.goal);
      await claim.lock.release();
      await reportStarted(context, started, options.json);
      return 0;
    } finally {
      await claim.lock.release();
    }
  }
  const started = await startGoal(context, goal);
  await reportStarted(context, started, options.json);
  noteModel(goal.model, { home: context.settings.home, workspace: goal.workspace });
  await warnIfNoToolHost(context, goal);
  return 0;
}

/** What `start` prints once a goal's execution has started, and the warning when no worker runs it. */
async function reportStarted(context: CliContext, started: StartedGoal, json?: boolean): Promise<number> {
  if (json) {
    printJson(started);
  } else {
    say(`started goal ${started.sessionId} (workflow ${started.workflowId})`);
    say(`  a worker must be running:  ${context.workerHint()}`);
    say(`  follow it:                 goalrun watch ${started.sessionId}`);
  }
  await warnIfNoWorker(context, started.taskQueue);
  return 0;
}

/**
 * `goalrun resume`: attach to a running goal, or start a new execution of a stopped one from its
 * checkpoint, with counters and the structured history carried over. A completed goal needs a new
 * instruction (--message) or --force; a goal at a limit needs that limit raised. The goal is named by
 * id, prefix, --last or name (get only); with none of them, picked from the project's sessions.
 */
export async function resumeCommand(
  context: CliContext,
  id: string | undefined,
  options: ResumeOptions,
): Promise<number> {
  const interrupted = onInterrupt();
  const sessionId = await sessionToResume(context, id, options.last);
  const store = await context.sessionStore();
  const lock = await lockSession(store, sessionId, 'resume');
  try {
    return await resumeSession(context, sessionId, options, interrupted, lock);
  } finally {
    await lock.release();
  }
}

/**
 * Resumes one session while holding its operation lock, which is given back once the new execution
 * has started (before following it). With `follow: false` (`start --name` of a stopped session) it
 * returns as `start` does.
 */
export async function resumeSession(
  context: CliContext,
  sessionId: string,
  options: ResumeOptions,
  interrupted: Promise<NodeJS.Signals>,
  lock: HeldSessionLock,
  follow = true,
): Promise<number> {
  const message = options.message?.trim();
  if (options.message !== undefined && !message)
    throw new ConfigError('--message is empty; say what to do next');
  const client = await context.temporal();
  const hostsWorker = options.worker !== false;
  const status = await workflowStatus(client, sessionId);
  if (status === 'RUNNING') {
    if (!follow) throw new ConfigError(`session ${sessionId} is running; steer it, or cancel it first`);
    await lock.release();
    if (hostsWorker) await hostRunningGoal(context, sessionId);
    const followed = await followOptions(context, sessionId, options, interrupted, 'now');
    await steerRunningGoal(context, sessionId, message, limitsFromFlags(options), followed.json === true);
    return followGoal(context, sessionId, followed);
  }
  const store = await context.sessionStore();
  const row = await store.findSession(sessionId);
  const saved = row ? snapshotFromRow(row) : null;
  const goal =
    saved && row
      ? (row.goalState as { goal: GoalDefinition }).goal
      : (await firstEvents(client, workflowIdOf(sessionId)).catch(() => null))?.input?.goal;
  if (!goal) throw new ConfigError(`no saved goal with session or workflow id "${sessionId}" to resume`);
  if (hostsWorker) {
    // This process runs the goal's tools (unless a tool host does): no goal restarts to fail call by call.
    await requireSandboxForGoal(goal);
    // The same checks as `run`: this process will make the model calls.
    goalFromOptions(
      goal.objective,
      { workspace: goal.workspace, model: goal.model, baseUrl: goal.baseUrl },
      context.settings,
      sessionId,
      true,
    );
  }
  const limitsOverride = limitsFromFlags(options);
  if (!saved) {
    // Stopped before its first checkpoint (cancelled before any worker ran it): nothing to carry over.
    if (hostsWorker) await context.hostWorker();
    const started = await startGoal(context, { ...goal, limits: { ...goal.limits, ...limitsOverride } });
    await lock.release();
    if (!follow) return reportStarted(context, started, options.json);
    if (!options.json) say(`goal ${sessionId} never ran a step; starting it from the beginning`);
    return followGoal(
      context,
      sessionId,
      await followOptions(context, sessionId, options, interrupted, 'start'),
    );
  }
  if (saved.status === 'completed' && !message && !options.force) {
    throw new ConfigError(
      `goal ${sessionId} already completed; resuming it would call the model again with nothing new to do. ` +
        `Give it a new instruction: goalrun resume ${sessionId} --message "<what to do next>" (or pass --force)`,
    );
  }
  const limits = { ...goal.limits, ...limitsOverride };
  const hit = limitHit(saved, limits);
  if (hit) {
    const field = LIMITS[hit].field;
    throw new ConfigError(
      `goal ${sessionId} is at ${describeLimit(hit, limits[field])}, so it would stop again at once; ` +
        raiseLimitAdvice(sessionId, hit, raisedLimit(hit, saved, limits)),
    );
  }
  if (hostsWorker) await context.hostWorker();
  const followed = follow ? await followOptions(context, sessionId, options, interrupted, 'now') : null;
  // The resumed execution logs its own init: the stream opens with it.
  if (followed?.stream) followed.stream.awaitInit = true;
  const started = await startGoal(context, goal, { resume: true, limitsOverride, resumeMessage: message });
  await lock.release();
  if (!followed) return reportStarted(context, started, options.json);
  if (!options.json) {
    say(
      `resuming goal ${sessionId} from step ${saved.steps}, iteration ${saved.iteration} (was ${saved.status})${message ? ' with a new instruction' : ''}`,
    );
  }
  // The earlier run's recent actions (paused, limits changed, …) are history: follow from here on.
  const shownUpTo = Math.max(0, ...(saved.recent ?? []).map((action) => action.n));
  return followGoal(context, sessionId, { ...followed, shownUpTo });
}

/**
 * `resume` of a goal whose workflow still runs: a goal waiting at a limit gets the raised limits
 * (the same update as `goalrun limits`, no new execution); a message goes to it as steering.
 */
async function steerRunningGoal(
  context: CliContext,
  sessionId: string,
  message: string | undefined,
  limits: Partial<GoalLimits>,
  json: boolean,
): Promise<void> {
  const client = await context.temporal();
  const live = await queryState(client.workflow.getHandle(workflowIdOf(sessionId)));
  const pairs = Object.entries({
    max_steps: limits.maxSteps,
    max_iterations: limits.maxIterations,
    max_minutes: limits.maxMinutes,
  }).filter(([, value]) => value !== undefined);
  if (live?.status === 'limit_reached') {
    if (pairs.length === 0) {
      const hit = limitOfReason(live.reason) ?? 'steps';
      const limits = live.limits ?? {
        maxSteps: live.steps,
        maxIterations: live.iteration,
        maxMinutes: 0,
        noProgressLimit: 0,
      };
      throw new ConfigError(
        `goal ${sessionId} is at ${describeLimit(hit, limits[LIMITS[hit].field])}, so it would stop again at once; ` +
          raiseLimitAdvice(sessionId, hit, raisedLimit(hit, live, limits)),
      );
    }
    const raised = await steerGoal(
      context,
      sessionId,
      `/limits ${pairs.map(([k, v]) => `${k}=${v}`).join(' ')}`,
    );
    if (!json) say(describeSteering(sessionId, raised));
  } else if (pairs.length > 0) {
    const changed = await steerGoal(
      context,
      sessionId,
      `/limits ${pairs.map(([k, v]) => `${k}=${v}`).join(' ')}`,
    );
    if (!json) say(describeSteering(sessionId, changed));
  }
  if (message) {
    const sent = await steerGoal(context, sessionId, message);
    if (!json) say(describeSteering(sessionId, sent));
  }
  if (!json) say(`goal ${sessionId} is running; following it`);
}

/**
 * How to follow a goal: the output format from --output-format / --json, and for stream-json where
 * the stream starts (`start`: the whole session; `now`: only what comes next).
 */
export async function followOptions(
  context: CliContext,
  sessionId: string,
  options: { json?: boolean; outputFormat?: string; fromStart?: boolean; after?: string },
  interrupted: Promise<NodeJS.Signals>,
  from: 'start' | 'now',
): Promise<FollowOptions> {
  const format = outputFormatOf(options);
  options.json = format !== 'text';
  const after = afterCursor(options);
  if (format !== 'stream-json') {
    if (after !== undefined) throw new ConfigError('--after needs --output-format stream-json');
    return { json: format === 'json', interrupted };
  }
  const fromCursor =
    after ??
    (from === 'start' || options.fromStart ? 0 : await (await context.sessionStore()).lastEventId(sessionId));
  return { json: true, interrupted, stream: { fromCursor } };
}

/** The cursor of `--after`, checked: a whole number, and not with --from-start. */
function afterCursor(options: { fromStart?: boolean; after?: string }): number | undefined {
  if (options.after === undefined) return undefined;
  if (options.fromStart) throw new ConfigError('give --from-start or --after, not both');
  const cursor = Number(options.after);
  if (!/^\d+$/.test(options.after.trim()) || !Number.isSafeInteger(cursor)) {
    throw new ConfigError(`--after must be an event's cursor (a whole number), got "${options.after}"`);
  }
  return cursor;
}

/** Says once, at start, that the model has no card (and what that means), if so. */
function noteModel(model: string, where: { home: string; workspace: string }): void {
  const note = modelNoteOf(model, where);
  if (note) notice(note);
}

/** Warns (on stderr) when nobody polls the goal's task queue: the goal would wait silently. */
async function warnIfNoWorker(context: CliContext, taskQueue: string): Promise<void> {
  const client = await context.temporal();
  if ((await hasLiveWorker(client, taskQueue)) === false)
    notice(noWorkerMessage(taskQueue, context.workerHint()));
}

/** A goal whose tools go to a tool host that nobody runs would wait at its first tool call, silently. */
async function warnIfNoToolHost(context: CliContext, goal: GoalDefinition): Promise<void> {
  if (!goal.toolTaskQueue) return;
  const client = await context.temporal();
  if ((await hasLiveToolHost(client, goal.toolTaskQueue)) === false) {
    notice(noToolHostMessage(goal.toolTaskQueue, goal.workspace));
  }
}

function announce(sessionId: string, context: CliContext, model: string, workspace: string): void {
  const ui = webUiUrl(context.settings, workflowIdOf(sessionId));
  say(`goal ${sessionId}`);
  say(`  model ${model} · workspace ${workspace}`);
  if (ui) say(`  Web UI ${ui}`);
  say('  Ctrl-C stops following; the goal keeps its state and can be resumed.');
}

/**
 * `resume` of a running goal with a worker in this process: the goal's steps move here (the `host`
 * update). A goal of a build from before 0.2.0 knows no host: this process then takes any call of the
 * store, as every foreground process did then.
 */
async function hostRunningGoal(context: CliContext, sessionId: string): Promise<void> {
  await context.hostWorker();
  const client = await context.temporal();
  try {
    const update = client.workflow.getHandle(workflowIdOf(sessionId)).executeUpdate(hostUpdate, {
      args: [{ queue: context.hostQueue ?? null, from: senderName() }],
    });
    update.catch(() => undefined);
    const answered = await Promise.race([update, delay(HOST_UPDATE_WAIT_MS, null, { ref: false })]);
    if (answered !== null) context.hostsGoal(sessionId);
  } catch (err) {
    if (!/no registered handler|unknown update|not found.*host/i.test(innermostMessage(err))) return;
    await context.dropWorker();
    await context.hostWorker({ exclusive: false });
  }
}

/** How long `resume` waits for a running goal to take this process as its host. */
const HOST_UPDATE_WAIT_MS = 15_000;
