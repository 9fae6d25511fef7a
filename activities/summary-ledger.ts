/**
 * The summarizer's paid calls in the daily ledger (issue 24 item 4): each request the provider billed
 * is recorded under the summarize activity's identity and the request's number, at its reported usage
 * or, when it gave none (a stream that broke), at the worst case the workflow priced for it. A summary
 * the workflow then drops, or a request that failed, was still paid for: the workflow reads those rows
 * back when the activity fails (workflows/paid-calls.ts), and learns of billed requests before the
 * one that answered from the result.
 */
import { log } from '@temporalio/activity';
import {
  type BilledAttemptRecord,
  type BilledAttempts,
  billedAttempt,
  type CallPricing,
  paidCallKeys,
  sumBilled,
} from '../core/paid-calls';
import type { RequestUsage } from '../core/usage';
import type { SessionStore } from '../store/types';

/** The ledger of one summarize activity. */
export interface SummaryLedger {
  /** Records request `request`; never throws (a row the store refused waits for flush). */
  record(request: number, usage: RequestUsage | null): Promise<void>;
  /** Writes the rows record could not; throws when the store refuses. */
  flush(): Promise<void>;
  /** The requests billed without an answer (every one before the answer that was used). */
  billedBeforeAnswer(): BilledAttempts | null;
}

/** The ledger of the summarize activity `instance` (core/paid-calls.ts activityInstance). */
export function summaryLedger(
  store: SessionStore,
  input: { sessionId: string; model: string; pricing?: CallPricing },
  instance: string,
): SummaryLedger {
  const unanswered: BilledAttemptRecord[] = [];
  const pending: Array<{ request: number; record: BilledAttemptRecord }> = [];
  const write = (request: number, record: BilledAttemptRecord) =>
    store.recordPaidCall({
      sessionId: input.sessionId,
      key: paidCallKeys.summary(instance, request),
      kind: 'summary',
      model: input.model,
      usage: record.usage,
      costUsd: record.costUsd,
      atReservation: record.atReservation,
    });
  const flush = async () => {
    while (pending.length > 0) {
      await write(pending[0].request, pending[0].record);
      pending.shift();
    }
  };
  return {
    async record(request, usage) {
      const record = billedAttempt(usage, input.pricing);
      if (usage === null) unanswered.push(record);
      pending.push({ request, record });
      await flush().catch((err: unknown) => {
        log.warn('summarizer call not recorded in the daily ledger yet', {
          sessionId: input.sessionId,
          error: err instanceof Error ? err.message : String(err),
        });
      });
    },
    flush,
    billedBeforeAnswer: () => sumBilled(unanswered),
  };
}
