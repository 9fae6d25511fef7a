/**
 * The store-wide daily budget's activities (issue 18 item 4; the ledger is store/daily-budget.ts).
 * The workflow runs them as local activities: each is one short transaction, and a local activity
 * records one history event where a normal one records three.
 */
import { type BilledAttempts, type CallPricing, paidCallKeys, sumBilled } from '../core/paid-calls';
import type { DailyReservation } from '../store/daily-budget';
import type { SessionStore } from '../store/types';
import { AttemptMeter } from './paid-attempts';

/** Reserve a model call's worst case against today's daily cap. */
export interface ReserveDailyInput {
  sessionId: string;
  model: string;
  reservationUsd: number;
}

/** Creates the daily-budget activities over a store. */
export function createDailyBudgetActivities(store: SessionStore) {
  return {
    /** One transaction under the budget row's lock: reserved, refused, or none (no daily cap set). */
    reserveDailyBudget(input: ReserveDailyInput): Promise<DailyReservation> {
      return store.reserveDaily(input.sessionId, input.model, input.reservationUsd);
    },
    /**
     * Ends a step's reservation. Every paid call of the step recorded its own cost in the ledger
     * (store/paid-calls.ts), so the hold is released; `costUsd`, what the workflow counted over the
     * step, is not recorded a second time (the field stays: it is in the histories of running goals).
     */
    settleDailyBudget(input: { id: string; costUsd: number }): Promise<void> {
      return store.releaseDaily(input.id);
    },

    /**
     * What a model-step or summarize activity that ended without an answer was billed (issue 24
     * item 4): its rows in the ledger, once the billed attempts its last heartbeat still carried (the
     * store was away, or its worker died) are written too. Read by the workflow once, when the
     * activity has ended, so each billed attempt is counted in the goal exactly once.
     */
    async billedAttempts(input: BilledAttemptsInput): Promise<BilledAttempts | null> {
      const { sessionId, model, instance, pricing, kind } = input;
      if (kind === 'step' && input.lastHeartbeat !== undefined) {
        const meter = new AttemptMeter({
          store,
          sessionId,
          model,
          instance,
          attempt: 0,
          pricing,
          previous: input.lastHeartbeat,
        });
        await meter.flush();
      }
      const prefix = kind === 'step' ? paidCallKeys.attempts(instance) : paidCallKeys.summaries(instance);
      return sumBilled(await store.paidCallsUnder(sessionId, prefix));
    },
  };
}

/** Which activity `billedAttempts` reads the billed calls of. */
export interface BilledAttemptsInput {
  sessionId: string;
  model: string;
  /** The activity's identity in its workflow run (core/paid-calls.ts activityInstance). */
  instance: string;
  kind: 'step' | 'summary';
  /** The pricing the activity was given, for attempts its last heartbeat carried unrecorded. */
  pricing?: CallPricing;
  /** The activity's last heartbeat details, when its failure carries them (a timeout). */
  lastHeartbeat?: unknown;
}
