/** What the Temporal Web UI shows of a goal: search attributes and the current-details Markdown. */
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { GoalState } from '../core/goal';
import { detailsMarkdown } from '../core/goal-details';
import type { GoalSnapshot } from '../core/goal-snapshot';
import { taskView } from '../core/task-graph';
import { GoalIterationKey, GoalStatusKey } from './definitions';
import { policyOf } from './policy';

/** The search attributes a run already shows: what its start set (patch start-attributes-published). */
export interface PublishedAttributes {
  status: string;
  iteration: number;
}

/** What a run's start set, read from the workflow info (the start event: the same on every replay). */
export function startAttributes(): PublishedAttributes {
  const attributes = workflowInfo().typedSearchAttributes;
  return {
    status: attributes.get(GoalStatusKey) ?? '',
    iteration: attributes.get(GoalIterationKey) ?? -1,
  };
}

/**
 * Returns a function that publishes the goal's state; search attributes only when they differ from
 * what the run shows (`shown`: nothing, for runs before the patch).
 */
export function createPublisher(
  current: () => { state: GoalState; snapshot: GoalSnapshot },
  shown: PublishedAttributes = { status: '', iteration: -1 },
) {
  // Each upsert is a history event and a visibility write, so unchanged values are not sent again.
  let published = shown;
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
