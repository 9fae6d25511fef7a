/**
 * Steering a running goal from the command line: `steer` with a message or an app command, and one
 * verb per command (`pause`, `limits`, `model`, …) that sends the same update; `approve` and `deny`
 * answer an escalation out of the sandbox.
 */

import { setTimeout as delay } from 'node:timers/promises';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { AppCommandError, isAppCommand, parseAppCommand } from '../../core/app-commands';
import { ConfigError } from '../../core/errors';
import { FINAL_STATUSES } from '../../core/goal';
import type { GoalSnapshot } from '../../core/goal-snapshot';
import { parseModelSpec } from '../../core/model-spec';
import { modelUnderCapRefusal } from '../../core/spend-cap';
import { SessionNameTaken } from '../../store/session-names';
import { approvalUpdate, type SteerResult, workflowIdOf } from '../../workflows/definitions';
import type { CliContext } from '../context';
import { type GoalRef, resolveSessionId } from '../goal-id';
import { dollarsFlag, positiveIntFlag } from '../goal-options';
import { queryState, snapshotFromRow, statusText, workflowStatus } from '../goal-status';
import { printJson, say } from '../output';
import { checkSessionName } from '../session-names';
import { type SteerOutcome, senderName, steerGoal } from '../steer-client';
import { hasLiveWorker, noWorkerMessage } from '../worker-presence';

/** Options every steering verb takes. */
export interface SteerOptions {
  json?: boolean;
  last?: boolean;
}

/** `goalrun steer <id> "text"`: a message for the model, or an app command when it starts with `/`. */
export async function steerCommand(
  context: CliContext,
  id: string | undefined,
  words: string[],
  options: SteerOptions,
): Promise<number> {
  const text = words.join(' ').trim();
  if (!text)
    throw new ConfigError(
      'say what to tell the goal: goalrun steer <id> "text" (or an app command, e.g. /help)',
    );
  return send(context, { id, last: options.last }, text, options);
}

/** A verb that sends one app command, e.g. `goalrun pause <id>` sends `/pause`. */
export function commandVerb(command: string) {
  return (context: CliContext, id: string | undefined, options: SteerOptions) =>
    send(context, { id, last: options.last }, `/${command}`, options);
}

/** `goalrun limits <id> --max-steps N …`. */
export async function limitsCommand(
  context: CliContext,
  id: string | undefined,
  options: SteerOptions & {
    maxSteps?: string;
    maxIterations?: string;
    maxMinutes?: string;
    maxCostUsd?: string;
    maxTokens?: string;
  },
): Promise<number> {
  const pairs = [
    ['max_steps', positiveIntFlag(options.maxSteps, '--max-steps')],
    ['max_iterations', positiveIntFlag(options.maxIterations, '--max-iterations')],
    ['max_minutes', positiveIntFlag(options.maxMinutes, '--max-minutes')],
    ['max_cost_usd', dollarsFlag(options.maxCostUsd, '--max-cost-usd')],
    ['max_tokens', positiveIntFlag(options.maxTokens, '--max-tokens')],
  ].filter(([, value]) => value !== undefined);
  if (pairs.length === 0)
    throw new ConfigError(
      'give at least one of --max-steps, --max-iterations, --max-minutes, --max-cost-usd, --max-tokens',
    );
  return send(
    context,
    { id, last: options.last },
    `/limits ${pairs.map(([k, v]) => `${k}=${v}`).join(' ')}`,
    options,
  );
}

/** `goalrun model <id> SPEC` and `goalrun rename <id> NAME`: a command with an argument. */
export function argumentVerb(command: 'model' | 'rename' | 'compact') {
  return async (context: CliContext, id: string | undefined, words: string[], options: SteerOptions) => {
    if (command === 'rename') {
      const sessionId = await resolveSessionId(context, { id, last: options.last });
      const name = checkSessionName(words.join(' '));
      await checkNameFree(context, sessionId, name);
      if (!(await takesCommands(context, sessionId))) return renameInStore(context, sessionId, name, options);
    }
    return send(context, { id, last: options.last }, `/${command} ${words.join(' ')}`.trim(), options);
  };
}

/**
 * Whether a goal's workflow runs and takes app commands: running, or waiting at a limit or its
 * budget. Any other goal (finished, cancelled, never run) is renamed in the store.
 */
async function takesCommands(context: CliContext, sessionId: string): Promise<boolean> {
  const client = await context.temporal();
  if ((await workflowStatus(client, sessionId)) !== 'RUNNING') return false;
  const live = await queryState(client.workflow.getHandle(workflowIdOf(sessionId)));
  return !(live && FINAL_STATUSES.includes(live.status) && !RAISABLE_STATUSES.includes(live.status));
}

/** Final statuses a command still moves on (a raise of the limit or the budget). */
const RAISABLE_STATUSES: readonly string[] = ['limit_reached', 'budget_reached'];

/** `rename` of a goal that runs no more: its name is the store's, which every command reads. */
async function renameInStore(
  context: CliContext,
  sessionId: string,
  name: string,
  options: SteerOptions,
): Promise<number> {
  const store = await context.sessionStore();
  if (!(await store.getSession(sessionId))) {
    throw new ConfigError(
      `goal ${sessionId} has no session in the store yet; rename it once it has run a step`,
    );
  }
  try {
    await store.renameSession(sessionId, name);
  } catch (err) {
    if (err instanceof SessionNameTaken) throw new ConfigError(err.message);
    throw err;
  }
  const text = `session renamed to "${name}"`;
  if (options.json)
    printJson({ sessionId, delivery: 'done', result: { kind: 'command', command: 'rename', text } });
  else say(text);
  return 0;
}

/** Names are unique per project: `rename` to a name another session of the project has is refused. */
async function checkNameFree(context: CliContext, sessionId: string, name: string): Promise<void> {
  const store = await context.sessionStore();
  const row = await store.getSession(sessionId);
  if (!row) return;
  const holder = await store.findSessionByName([row.projectHash], name);
  if (holder && holder.id !== sessionId)
    throw new ConfigError(
      `the name "${name}" is taken by session ${holder.id} of this project; pick another`,
    );
}

/** How long `approve` and `deny` wait for a worker to take the answer before they say none did. */
export const APPROVAL_ANSWER_WAIT_MS = 30_000;

/**
 * `goalrun approve <id>` and `goalrun deny <id> [--reason TEXT]`. The answer is a Temporal update,
 * which only a running worker can take: with none, it says so instead of waiting without a word.
 */
export function approvalVerb(decision: 'approve' | 'deny') {
  return async (
    context: CliContext,
    id: string | undefined,
    options: SteerOptions & { reason?: string },
  ): Promise<number> => {
    const sessionId = await resolveSessionId(context, { id, last: options.last });
    const client = await context.temporal();
    if ((await workflowStatus(client, sessionId)) !== 'RUNNING') {
      throw new ConfigError(`goal ${sessionId} is not running; nothing waits for approval`);
    }
    const handle = client.workflow.getHandle(workflowIdOf(sessionId));
    // A goal that is doing something else says so at once instead of leaving the answer to hang (issue 16).
    const live = await queryState(handle);
    // A sign-off (awaiting_user) is answered the same way as an escalation.
    if (live && live.status !== 'waiting_approval' && live.status !== 'awaiting_user') {
      throw new ConfigError(
        `goal ${sessionId} is not waiting for approval: it is ${statusText(live.status)} (${doingNow(live)}); nothing to ${decision}`,
      );
    }
    const { taskQueue } = await handle.describe();
    const retry = `the goal keeps waiting; answer again once a worker runs (${context.workerHint()})`;
    if ((await hasLiveWorker(client, taskQueue)) === false) {
      throw new ConfigError(`${noWorkerMessage(taskQueue, context.workerHint())}; ${retry}`);
    }
    try {
      const update = handle.executeUpdate(approvalUpdate, {
        args: [{ decision, reason: options.reason, from: senderName() }],
      });
      // Given up on below, it must not fail the process later as an unhandled rejection.
      update.catch(() => undefined);
      const text = await Promise.race([update, delay(APPROVAL_ANSWER_WAIT_MS, null, { ref: false })]);
      if (text === null) {
        throw new ConfigError(
          `no worker took the answer within ${APPROVAL_ANSWER_WAIT_MS / 1000} s (a worker of task queue ${taskQueue} may have just stopped); ` +
            `it may still reach the goal when a worker picks it up, else ${retry}`,
        );
      }
      if (options.json) printJson({ decision, text });
      else say(text);
      return 0;
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        throw new ConfigError(
          `goal ${sessionId}: ${(err.cause as Error | undefined)?.message ?? err.message}`,
        );
      }
      throw err;
    }
  };
}

/** A few words on what a goal is doing, for a message that says why it cannot take an answer. */
function doingNow(snapshot: GoalSnapshot): string {
  const step = `step ${snapshot.steps}, iteration ${snapshot.iteration}`;
  return snapshot.lastTool ? `${step}, last tool ${snapshot.lastTool}` : step;
}

async function send(context: CliContext, ref: GoalRef, text: string, options: SteerOptions): Promise<number> {
  checkLocally(text);
  const sessionId = await resolveSessionId(context, ref);
  await checkModelUnderCap(context, sessionId, text);
  const outcome = await steerGoal(context, sessionId, text);
  // A message the goal ended without delivering did not do what was asked: a failure for scripts too.
  const undelivered =
    outcome.delivery === 'done' && outcome.result.kind === 'message' && outcome.result.undelivered;
  if (options.json) {
    const seq = deliveredSeq(outcome);
    printJson({ sessionId, ...outcome, ...(seq === undefined ? {} : { seq }) });
    return undelivered ? 1 : 0;
  }
  say(describe(sessionId, outcome));
  return undelivered ? 1 : 0;
}

/** The transcript seq of a delivered message (what the `steer` update returns), if it is known. */
export function deliveredSeq(outcome: SteerOutcome): number | undefined {
  if (outcome.delivery !== 'done' || outcome.result.kind !== 'message') return undefined;
  const { seq, undelivered } = outcome.result;
  return seq > 0 && !undelivered ? seq : undefined;
}

/** One or a few lines on what a steering request did. */
export function describe(sessionId: string, outcome: SteerOutcome): string {
  switch (outcome.delivery) {
    case 'queued':
      return `no worker runs goal ${sessionId} now; the message is kept and delivered before its next step once a worker picks it up`;
    case 'accepted':
      return `accepted; the current step is still running, and the message goes to the model before the next one`;
    case 'done':
      return describeResult(sessionId, outcome.result);
  }
}

function describeResult(sessionId: string, result: SteerResult): string {
  if (result.kind === 'message') {
    if (result.undelivered) return `not delivered: ${result.undelivered}`;
    if (result.duplicate) {
      return `this message was delivered already${result.seq > 0 ? ` (message #${result.seq})` : ''}`;
    }
    if (result.unpaused) {
      return `delivered (message #${result.seq}); the goal was paused by the runaway breaker and goes on now`;
    }
    if (result.paused) {
      return `delivered (message #${result.seq}), but the goal is paused (${result.paused}): the model reads it once the goal goes on. To let it go on: goalrun unpause ${sessionId}`;
    }
    return `delivered before the next step (message #${result.seq})`;
  }
  return result.text;
}

/**
 * A money cap counts every call at its card's prices, so a goal under one runs only priced models:
 * `/model` to a model without prices, and `/limits max_cost_usd=…` on a goal whose model has none, are
 * refused here with the reason (the goal refuses `/model` too, for a request that comes another way).
 * The goal is read as it says it is now, else as its store row saved it; a goal that cannot be read is
 * left to the goal.
 */
async function checkModelUnderCap(context: CliContext, sessionId: string, text: string): Promise<void> {
  if (!isAppCommand(text)) return;
  const command = parseAppCommand(text);
  const newCap = command.name === 'limits' ? command.limits.maxCostUsd : undefined;
  if (command.name !== 'model' && newCap === undefined) return;
  const goal = await goalNow(context, sessionId);
  if (!goal) return;
  const { unpricedReason } =
    require('../../activities/models/catalog') as typeof import('../../activities/models/catalog');
  if (command.name === 'model') {
    if (goal.maxCostUsd === undefined) return;
    const unpriced = unpricedReason(command.model, context.settings.home);
    if (unpriced)
      throw new ConfigError(`goal ${sessionId}: /model ${modelUnderCapRefusal(unpriced, goal.maxCostUsd)}`);
    return;
  }
  if (newCap === undefined || goal.model === undefined) return;
  const unpriced = unpricedReason(goal.model, context.settings.home);
  if (unpriced) throw new ConfigError(`goal ${sessionId}: /limits ${modelUnderCapRefusal(unpriced, newCap)}`);
}

/** The goal's model and money cap, from the running workflow or its saved state; null when neither can be read. */
async function goalNow(
  context: CliContext,
  sessionId: string,
): Promise<{ model?: string; maxCostUsd?: number } | null> {
  try {
    const client = await context.temporal();
    const live = await queryState(client.workflow.getHandle(workflowIdOf(sessionId)));
    if (live) return { model: live.model, maxCostUsd: live.limits?.maxCostUsd };
  } catch {
    // No worker to answer the query: the saved state says it.
  }
  try {
    const row = await (await context.sessionStore()).findSession(sessionId);
    if (!row) return null;
    return { model: row.model, maxCostUsd: snapshotFromRow(row)?.limits?.maxCostUsd ?? undefined };
  } catch {
    return null;
  }
}

/**
 * What can be checked here is checked here, before anything is sent: a mistyped command or model is
 * an error at once (exit 2), not a notice the goal writes later.
 */
function checkLocally(text: string): void {
  if (!isAppCommand(text)) return;
  try {
    const command = parseAppCommand(text);
    if (command.name === 'model') parseModelSpec(command.model);
  } catch (err) {
    if (err instanceof AppCommandError || err instanceof ConfigError) throw new ConfigError(err.message);
    throw err;
  }
}
