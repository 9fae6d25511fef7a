/**
 * The compaction module's view of a goal run (compaction-host.ts says what it needs): the run's
 * state, where its calls go, how it waits on them, and how it writes its notices. Which of these
 * behave as this build does depends on the patches of the build that started the run.
 */

import { EVENT_KINDS } from '../core/event-kinds';
import { userTextOf } from '../core/messages';
import type { ModelCard } from '../core/model-card';
import { storeKeys } from '../core/store-keys';
import { budgetAllows } from './budget-gate';
import type { CompactionHost } from './compaction';
import { summarizerFallback } from './failover';
import type { GoalRun } from './goal-run-port';
import { onGoalHost } from './host-placement';
import { billedOnGiveUp } from './paid-calls';
import { PATCH } from './patches';

/** The compaction host of a run. */
export function compactionHostOf(run: GoalRun): CompactionHost {
  return {
    latestSteeringOnly: !run.features[PATCH.keepEverySteering],
    mergesConcurrentChanges: run.features[PATCH.commandQueue],
    serve: (work) => run.serveWork(work),
    ...(run.features[PATCH.commandQueue]
      ? {
          // Priced on the summarizer's card only by runs that count paid calls (the same decisions on replay).
          budgetAllows: (inputTokens: number, card?: ModelCard | null) =>
            run.features[PATCH.paidCalls] && card !== undefined
              ? budgetAllows(run.state, inputTokens, card)
              : budgetAllows(run.state, inputTokens),
        }
      : {}),
    // Summarizer calls hold their worst case against the daily budget and count what they were billed.
    ...(run.features[PATCH.paidCalls] ? summarizerSpend(run) : {}),
    ...(run.features[PATCH.failover]
      ? { summarizerFallback: (model: string, err: unknown) => summarizerFallback(run, model, err) }
      : {}),
    onHost: (call, lost) => onGoalHost(run, call, lost),
    untilStored: (what, call) => run.untilStored(what, call),
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

/** The daily hold and the billed count of a run's summarizer calls (PATCH.paidCalls). */
function summarizerSpend(run: GoalRun): Pick<CompactionHost, 'holdDaily' | 'billedOnFailure'> {
  return {
    holdDaily: async (model, reservationUsd) => {
      if (!run.features[PATCH.dailyBudget]) return { refused: false, release: async () => {} };
      const sessionId = run.state.goal.sessionId;
      const held = await run.store.reserveDailyBudget({ sessionId, model, reservationUsd });
      const id = held.kind === 'reserved' ? held.id : null;
      return {
        refused: held.kind === 'refused',
        // The summary recorded its own cost in the ledger: the hold only goes.
        release: async () => {
          if (id !== null) await run.store.settleDailyBudget({ id, costUsd: 0 });
        },
      };
    },
    billedOnFailure: (err, model, pricing) => billedOnGiveUp(run, 'summary', { model, pricing }, err),
  };
}
