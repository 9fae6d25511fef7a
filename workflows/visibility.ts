/** What the Temporal Web UI shows of a goal: search attributes and the current-details Markdown. */
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { GoalSnapshot, GoalState } from '../core/goal';
import { detailsMarkdown } from '../core/goal-details';
import { taskView } from '../core/task-graph';
import { GoalIterationKey, GoalStatusKey } from './definitions';
import { policyOf } from './policy';

/** Returns a function that publishes the goal's state; search attributes only when they change. */
export function createPublisher(current: () => { state: GoalState; snapshot: GoalSnapshot }) {
  // Each upsert is a history event, so unchanged values are not sent again.
  let published = { status: '', iteration: -1 };
  return () => {
    const { state, snapshot } = current();
    if (published.status !== state.status || published.iteration !== state.iteration) {
      upsertSearchAttributes([
        { key: GoalStatusKey, value: state.status },
        { key: GoalIterationKey, value: state.iteration },
      ]);
      published = { status: state.status, iteration: state.iteration };
    }
    const policy = policyOf(state);
    const context = policy
      ? `${policy.usedTokens} of ${policy.thresholdTokens} tokens before auto-compact (${policy.usedPct}%, ${policy.gauge}) · auto-compact ${policy.autoCompact} · failures ${policy.failures} of ${policy.maxFailures}`
      : undefined;
    setCurrentDetails(detailsMarkdown(snapshot, taskView(state.tasks), context));
  };
}
