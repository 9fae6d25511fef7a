/** `watch` and `cancel`: commands that follow or change an existing goal (`status` and `list` are in status-commands.ts). */
import type { Client } from '@temporalio/client';
import { ConfigError } from '../../core/errors';
import { workflowIdOf } from '../../workflows/definitions';
import type { CliContext } from '../context';
import { EventStreamPrinter } from '../event-stream';
import { exitCodeOf } from '../exit-codes';
import { describeOutcome, followGoal } from '../follow';
import { followOptions } from '../follow-options';
import { resolveSessionId } from '../goal-id';
import { loadStatus, waitingForWorker, workflowStatus } from '../goal-status';
import { formatSnapshot, notice, printJson, say } from '../output';
import { shortIdFor } from '../short-ids';
import { onInterrupt } from '../signals';
import { hasLiveWorker, noWorkerMessage } from '../worker-presence';

/** How often `cancel --wait` repeats that it is still waiting for a worker. */
const CANCEL_WAIT_REMINDER_MS = 30_000;

/** `goalrun watch <id>`: follow until the end; exit code as for `run`. */
export async function watchCommand(
  context: CliContext,
  id: string | undefined,
  options: {
    json?: boolean;
    last?: boolean;
    outputFormat?: string;
    fromStart?: boolean;
    after?: string;
    includePartialMessages?: boolean;
  },
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
        undefined,
        { partialMessages: follow.stream.partialMessages },
      );
      printer.openWith(async () => view);
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
    const shortId = await shortIdFor(context, sessionId);
    say(formatSnapshot({ ...(await loadStatus(context, sessionId)), shortId }));
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
