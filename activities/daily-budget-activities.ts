/**
 * The store-wide daily budget's activities (issue 18 item 4; the ledger is store/daily-budget.ts).
 * The workflow runs them as local activities: each is one short transaction, and a local activity
 * records one history event where a normal one records three.
 */
import type { DailyReservation } from '../store/daily-budget';
import type { SessionStore } from '../store/types';

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
    /** Settles a reservation with what the call cost (0 when it made no request). */
    settleDailyBudget(input: { id: string; costUsd: number }): Promise<void> {
      return store.settleDaily(input.id, input.costUsd);
    },
  };
}
