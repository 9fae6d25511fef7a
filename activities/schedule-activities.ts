/**
 * The activity of a scheduled goal's firing (issue 28 §3): the session row of the goal it starts,
 * named `<schedule>-<time>`, made before the goal's workflow starts, as `start --name` makes it.
 * Idempotent: a retry finds the row it made, under the name it gave.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { FailureType } from '../core/errors';
import { SessionNameTaken } from '../store/session-names';
import type { SessionStore } from '../store/types';

/** Names tried (`NAME`, `NAME-2`, …) when two firings of a schedule fall in the same second. */
const NAME_ATTEMPTS = 10;

/** What the firing's session row is made of. */
export interface ScheduledSessionInput {
  sessionId: string;
  /** The name wanted: `<schedule>-<time>`. */
  name: string;
  projectDir: string;
  projectHash: string;
  objective: string;
  model: string;
  workflowId: string;
}

/** The schedule activities of a worker over one store. */
export function createScheduleActivities(store: SessionStore) {
  return {
    /** Makes the firing's named session row; returns the name it got. */
    async createScheduledSession(input: ScheduledSessionInput): Promise<{ name: string }> {
      await store.createSession({
        id: input.sessionId,
        projectDir: input.projectDir,
        projectHash: input.projectHash,
        objective: input.objective,
        model: input.model,
        workflowId: input.workflowId,
      });
      for (let attempt = 1; attempt <= NAME_ATTEMPTS; attempt += 1) {
        const name = attempt === 1 ? input.name : `${input.name}-${attempt}`;
        try {
          // Renaming a row to the name it has changes nothing: a retry lands here too.
          await store.renameSession(input.sessionId, name);
          return { name };
        } catch (err) {
          if (!(err instanceof SessionNameTaken)) throw err;
        }
      }
      throw ApplicationFailure.create({
        message: `the names ${input.name} to ${input.name}-${NAME_ATTEMPTS} are all taken in ${input.projectDir}`,
        type: FailureType.ConfigError,
        nonRetryable: true,
      });
    },

    /** Ends a firing's session whose goal never started (the firing was cancelled meanwhile) as cancelled. */
    async cancelScheduledSession(input: { sessionId: string; reason: string }): Promise<void> {
      await store.updateSession(input.sessionId, { status: 'cancelled', reason: input.reason });
    },
  };
}

/** The activities the scheduled goal workflow calls. */
export type ScheduleActivities = ReturnType<typeof createScheduleActivities>;
