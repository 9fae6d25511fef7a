/**
 * The compaction module's view of a goal run (compaction-host.ts says what it needs): the run's
 * state, where its calls go, how it waits on them, and how it writes its notices. Which of these
 * behave as this build does depends on the patches of the build that started the run.
 */
import { EVENT_KINDS } from '../core/event-kinds';
import { userTextOf } from '../core/messages';
import { storeKeys } from '../core/store-keys';
import { budgetAllows } from './budget-gate';
import type { CompactionHost } from './compaction';
import type { GoalRun } from './goal-run-port';
import { onGoalHost } from './host-placement';
import { PATCH } from './patches';

/** The compaction host of a run. */
export function compactionHostOf(run: GoalRun): CompactionHost {
  return {
    latestSteeringOnly: !run.features[PATCH.keepEverySteering],
    mergesConcurrentChanges: run.features[PATCH.commandQueue],
    serve: (work) => run.serveWork(work),
    ...(run.features[PATCH.commandQueue]
      ? { budgetAllows: (inputTokens: number) => budgetAllows(run.state, inputTokens) }
      : {}),
    onHost: (call) => onGoalHost(run, call),
    get: () => run.state,
    set: (next) => {
      run.state = next;
    },
    // Notices are numbered per session; the execution keeps a resumed run's notices apart.
    appendNotice: async (n, message, done) => {
      const key = storeKeys.notice(run.execution, n);
      const text = userTextOf(message).replace(/^\[goalrun\] /, '');
      const event = done
        ? { kind: EVENT_KINDS.compaction, data: { ...done, text }, key }
        : { kind: EVENT_KINDS.notice, data: { text }, key };
      await run.appendMessage(key, message, { event });
    },
  };
}
