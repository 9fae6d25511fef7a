/**
 * Sending a steering message or an app command to a running goal. With a worker polling, it is a
 * Temporal update: validated by the goal, acknowledged, and answered with what it did. With none,
 * it is a signal, which Temporal keeps durably until a worker picks the goal up; the same id makes a
 * message sent both ways count once.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { ConfigError } from '../core/errors';
import { FINAL_STATUSES } from '../core/goal';
import { type SteerResult, steerSignal, steerUpdate, workflowIdOf } from '../workflows/definitions';
import { innermostMessage } from '../workflows/failures';
import type { CliContext } from './context';
import { queryState, workflowStatus } from './goal-status';
import { hasLiveWorker } from './worker-presence';

/** How long `steer` waits for a message to reach the next step boundary before it returns. */
export const STEER_WAIT_MS = 30_000;

/**
 * How long `steer` waits for a worker to accept its update. Temporal lists a worker that just
 * stopped as a poller for a while, and an update nobody accepts would block until one comes back:
 * past this, the message goes as a durable signal instead (the same id, so it counts once).
 */
export const STEER_ACCEPT_TIMEOUT_MS = 10_000;

/** What became of a steering request. */
export type SteerOutcome =
  | { delivery: 'done'; result: SteerResult }
  /** Accepted by the goal; the message goes to the model at the next step boundary. */
  | { delivery: 'accepted'; id: string }
  /** No worker runs the goal: kept durably by Temporal, delivered when one picks the goal up. */
  | { delivery: 'queued'; id: string };

/** Who is sending, as the transcript and the Web UI show it: `user@host`. */
export function senderName(): string {
  // `goalrun serve` runs its actions through these commands: they come from the web page.
  if (process.env.GOALRUN_STEER_FROM === 'web') return 'web';
  let user = 'someone';
  try {
    user = os.userInfo().username;
  } catch {
    // No passwd entry (some containers): the host still says where it came from.
  }
  return `${user}@${os.hostname()}`;
}

/**
 * Sends a text to a goal. Throws ConfigError when the goal is not running or rejects the request
 * (the goal's own reason, e.g. an unknown command with the list of known ones).
 */
export async function steerGoal(
  context: CliContext,
  sessionId: string,
  text: string,
  options: { waitMs?: number } = {},
): Promise<SteerOutcome> {
  const client = await context.temporal();
  const status = await workflowStatus(client, sessionId);
  if (status !== 'RUNNING') {
    throw new ConfigError(
      `goal ${sessionId} is not running${status ? ` (${status.toLowerCase()})` : ''}; to give it a new instruction: goalrun resume ${sessionId} --message "…"`,
    );
  }
  const handle = client.workflow.getHandle(workflowIdOf(sessionId));
  const live = await queryState(handle);
  // A goal waiting at a limit or its budget is raised by a command: it still takes them.
  if (
    live &&
    FINAL_STATUSES.includes(live.status) &&
    live.status !== 'limit_reached' &&
    live.status !== 'budget_reached'
  ) {
    throw new ConfigError(
      `goal ${sessionId} is ${live.status}; to give it a new instruction: goalrun resume ${sessionId} --message "…"`,
    );
  }
  const request = { id: randomUUID(), text, from: senderName() };
  const description = await handle.describe();
  if (!context.hostsWorker && (await hasLiveWorker(client, description.taskQueue)) === false) {
    await handle.signal(steerSignal, request);
    return { delivery: 'queued', id: request.id };
  }
  try {
    const starting = handle.startUpdate(steerUpdate, {
      args: [request],
      updateId: request.id,
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    });
    const update = await Promise.race([starting, sleep(STEER_ACCEPT_TIMEOUT_MS).then(() => null)]);
    if (!update) {
      // Nobody took it: no live worker after all. A late rejection of the update has no one to tell.
      starting.catch(() => undefined);
      await handle.signal(steerSignal, request);
      return { delivery: 'queued', id: request.id };
    }
    const result = await Promise.race([
      update.result(),
      sleep(options.waitMs ?? STEER_WAIT_MS).then(() => null),
    ]);
    return result ? { delivery: 'done', result } : { delivery: 'accepted', id: request.id };
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      const why = innermostMessage(err);
      // The server's words when the goal's run closed with the request in flight (it ended, or it
      // continued as new) are about Temporal, not about what the user can do.
      if (/completed before the Update completed/i.test(why)) {
        throw new ConfigError(
          `goal ${sessionId} ended its run before it could carry this out; see: goalrun status ${sessionId}`,
        );
      }
      throw new ConfigError(`goal ${sessionId} refused it: ${why}`);
    }
    throw err;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
