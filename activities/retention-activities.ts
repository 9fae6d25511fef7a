/**
 * The activity of the scheduled daily clean (issue 17, retention): the same clean as
 * `goalrun clean --all --yes` with the configured rule, run by a worker on the store's task queue.
 * Temporal is reached through the worker's own client (the activity context's).
 */
import { Context } from '@temporalio/activity';
import { parseRetentionDuration } from '../core/retention';
import type { RetentionInput, RetentionResult } from '../core/retention-schedule';
import type { SessionStore } from '../store/types';
import { chooseSessions, removeSessions } from './clean-sessions';

/** The retention activities of a worker over one store. */
export function createRetentionActivities(store: SessionStore) {
  return {
    /** Removes the sessions the configured rule chooses, in every project of the store. */
    async cleanOldSessions(input: RetentionInput): Promise<RetentionResult> {
      const olderThanMs = input.olderThan === undefined ? undefined : parseRetentionDuration(input.olderThan);
      if (olderThanMs === null)
        throw new Error(`retention older_than "${input.olderThan}" is not a duration`);
      const context = Context.current();
      const scope = {
        store,
        client: context.client,
        namespace: context.client.options.namespace,
        projectHashes: null,
        rule: { olderThanMs, keep: input.keep, includeNamed: false, now: new Date() },
      };
      const chosen = await chooseSessions(scope);
      // A heartbeat per session: a long clean shows it is alive, and a cancelled one stops between sessions.
      const removed = await removeSessions(scope, chosen, () => context.heartbeat());
      return { removed: removed.length, skipped: chosen.length - removed.length };
    },
  };
}

/** The activities the retention workflow calls. */
export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
