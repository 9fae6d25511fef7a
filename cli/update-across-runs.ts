/**
 * An update to a running goal that may meet the end of its run: a goal continues as new every few
 * thousand events, and an update that arrives in that moment fails although the goal goes on in its
 * next run. Such an update is sent again, to the run that is current then.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ConfigError } from '../core/errors';
import { innermostMessage } from '../workflows/failures';

/** Times an update is sent in all, when each attempt meets the end of a run. */
export const UPDATE_RUN_ATTEMPTS = 3;

/** Whether an update failed only because the run it reached ended (it continued as new, or closed). */
export function endedUnderIt(err: unknown): boolean {
  if (err instanceof WorkflowNotFoundError) return true;
  const text = `${err instanceof Error ? err.message : ''} ${innermostMessage(err)}`;
  return /completed before the Update completed|workflow execution already completed|update was aborted|aborted by closing|moving on to its next run/i.test(
    text,
  );
}

/**
 * Runs `send` (one update attempt against the goal's current run). When the attempt meets the end
 * of the run and `stillRunning` says the goal goes on, it is sent again; a goal that ended says so.
 * The goal's own refusal (a validator or handler error) becomes a ConfigError with its words.
 */
export async function updateAcrossRuns<T>(
  goal: string,
  send: () => Promise<T>,
  stillRunning: () => Promise<boolean>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (endedUnderIt(err)) {
        if (attempt < UPDATE_RUN_ATTEMPTS && (await stillRunning())) continue;
        throw new ConfigError(
          `goal ${goal} ended its run before it could carry this out; see: goalrun status ${goal}`,
        );
      }
      if (err instanceof WorkflowUpdateFailedError) {
        throw new ConfigError(`goal ${goal} refused it: ${innermostMessage(err)}`);
      }
      throw err;
    }
  }
}
