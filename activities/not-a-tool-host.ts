/**
 * What a worker that runs no tools (`--role model`) answers when a goal asks it for a tool host's call
 * as a local activity: a typed failure, so the goal makes the call again as an activity, which a
 * worker that runs tools takes. Registered only where the tool activities are not; as an activity
 * it fails retryably, as a call to an unregistered activity would.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/errors';
import type { WorkspaceContextSummary } from '../core/extensions/workspace-context';

/** The local activities of a tool host that a goal may call where its workflow task runs. */
export function notAToolHostActivities() {
  return {
    async gatherWorkspaceContext(): Promise<WorkspaceContextSummary> {
      // As a local activity the goal falls back at once; as an activity a retry may find a tool host.
      const local = Context.current().info.isLocal;
      throw ApplicationFailure.create({
        message: 'this worker runs no tools (--role model)',
        type: FailureType.NotAToolHost,
        nonRetryable: local,
      });
    },
  };
}
