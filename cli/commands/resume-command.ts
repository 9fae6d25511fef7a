/**
 * `resume`: attach to a running goal, or start a new execution of a stopped one from its checkpoint.
 * `run --name` and `start --name` continue a stopped named session through resumeSession too.
 */

import { setTimeout as delay } from 'node:timers/promises';
import { ConfigError } from '../../core/errors';
import { forkOriginOf } from '../../core/fork-point';
import type { GoalDefinition, GoalLimits } from '../../core/goal';
import { type HeldSessionLock, lockSession } from '../../store/operation-lock';
import { hostUpdate, workflowIdOf } from '../../workflows/definitions';
import { innermostMessage } from '../../workflows/failures';
import type { CliContext } from '../context';
import { followGoal } from '../follow';
import { followOptions } from '../follow-options';
import { goalFromOptions } from '../goal-definition';
import { type GoalOptions, limitsFromFlags } from '../goal-options';
import { queryState, snapshotFromRow, workflowStatus } from '../goal-status';
import { describeLimit, LIMITS, limitHit, limitOfReason, raisedLimit, raiseLimitAdvice } from '../limit-hint';
import { notice, say } from '../output';
import { sessionToResume } from '../resume-target';
import { requireSandboxForGoal } from '../sandbox-check';
import { shortIdFor } from '../short-ids';
import { onInterrupt } from '../signals';
import { reportStarted, startGoal } from '../start-goal';
import { senderName, steerGoal } from '../steer-client';
import { firstEvents } from '../worker-presence';
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
  let status = await workflowStatus(client, sessionId);
  // A goal that has just ended may still be running its last activities (its `run` returned first).
  if (status === 'RUNNING') status = await afterEnding(context, sessionId, hostsWorker);
  const retrust = options.trustProject === true || options.trustProjectMcp === true;
  if (status === 'RUNNING') {
    if (!follow) throw new ConfigError(`session ${sessionId} is running; steer it, or cancel it first`);
    if (retrust) {
      notice(
        `goal ${sessionId} is running: --trust-project takes effect when a stopped goal is resumed (the running execution keeps the files it pinned)`,
      );
    }
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
      { workspace: goal.workspace, model: goal.model, baseUrl: goal.baseUrl, apiKeyEnv: goal.apiKeyEnv },
      context.settings,
      sessionId,
      true,
    );
  }
  const limitsOverride = limitsFromFlags(options);
  if (!saved) {
    // Stopped before its first checkpoint (cancelled before any worker ran it): nothing to carry over.
    if (hostsWorker) await context.hostWorker();
    const started = await startGoal(context, {
      ...goal,
      limits: { ...goal.limits, ...limitsOverride },
      ...(retrust ? { extensions: { ...goal.extensions, trustProject: true } } : {}),
    });
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
  const started = await startGoal(context, goal, {
    resume: true,
    limitsOverride,
    resumeMessage: message,
    trustProject: retrust,
  });
  if (retrust && !options.json) {
    say(
      `trusting the project's .goalrun/hooks.json and .mcp.json as they are now (pinned for this goal from here on)`,
    );
  }
  await lock.release();
  if (!followed) return reportStarted(context, started, options.json);
  if (!options.json) {
    const instruction = message ? ' with a new instruction' : '';
    // A fork that never ran was not cancelled and recovers nothing: it starts after the parent's step.
    const origin = row ? forkOriginOf(row.goalState, row) : null;
    say(
      origin
        ? `starting fork of ${await parentLabel(context, origin.parentId)} at step ${origin.atStep}${instruction}`
        : `resuming goal ${await shortIdFor(context, sessionId)} from step ${saved.steps}, iteration ${saved.iteration} (was ${saved.status})${instruction}`,
    );
  }
  // The earlier run's recent actions (paused, limits changed, …) are history: follow from here on.
  const shownUpTo = Math.max(0, ...(saved.recent ?? []).map((action) => action.n));
  return followGoal(context, sessionId, { ...followed, shownUpTo });
}

/** How a fork's first resume names its parent: its name and short id, or its short id. */
async function parentLabel(context: CliContext, parentId: string): Promise<string> {
  const shortId = await shortIdFor(context, parentId);
  const name = (await (await context.sessionStore()).getSession(parentId))?.name;
  return name ? `${name} (${shortId})` : shortId;
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

/** Statuses that end the workflow: one that shows them and still runs is only finishing up. */
const ENDING_STATUSES: ReadonlySet<string> = new Set([
  'completed',
  'blocked',
  'failed',
  'cancelled',
  'cleared',
]);
/** How long `resume` waits for such a workflow to close before it treats the goal as running. */
const ENDING_WAIT_MS = 60_000;

/**
 * The workflow status once a goal that has just ended has closed: `run` returns when the goal says it
 * ended, and its workflow may still run its last activities, bound for the process that ran it. This
 * process takes them over (when it hosts a worker) and waits for the close, so `resume` right after
 * `run` resumes instead of steering a goal that is done.
 */
async function afterEnding(
  context: CliContext,
  sessionId: string,
  hostsWorker: boolean,
): Promise<string | null> {
  const client = await context.temporal();
  const handle = client.workflow.getHandle(workflowIdOf(sessionId));
  // The process that ran it may have been the only worker: this one answers the query (and would
  // host the goal's steps next anyway).
  if (hostsWorker) await context.hostWorker();
  const live = await queryState(handle).catch(() => null);
  if (!live || !ENDING_STATUSES.has(live.status)) return 'RUNNING';
  if (hostsWorker) await hostRunningGoal(context, sessionId);
  await Promise.race([
    handle.result().catch(() => undefined),
    delay(ENDING_WAIT_MS, undefined, { ref: false }),
  ]);
  return workflowStatus(client, sessionId);
}
