/**
 * What the attempts of one model-step activity were billed (issue 24 item 4). An attempt is billed
 * once the provider accepted its request and began answering (activities/providers/stream-idle.ts).
 * One that then gives no answer the goal uses (a stalled stream, an error mid-answer, an answer lost
 * with the store write after it, a pause that stopped it) records a row of its own in the daily ledger
 * before it rethrows: at the usage the provider reported, else at the call's worst case. The row is
 * keyed by the activity and the attempt, so it survives the attempt and its worker and counts once.
 *
 * When the store is away the row cannot be written: the attempt carries it in its heartbeat details,
 * which Temporal hands to the next attempt, and that one writes it. The same details say when an
 * attempt was being answered, so an attempt whose worker died mid-stream is recorded by the next one.
 * The workflow learns the sum from the result of the attempt that succeeds (`billed`), or, when the
 * activity gives up, from the ledger itself (workflows/paid-calls.ts).
 */
import { log } from '@temporalio/activity';
import { z } from 'zod';
import {
  type BilledAttempts,
  billedAttempt,
  type CallPricing,
  paidCallKeys,
  sumBilled,
} from '../core/paid-calls';
import type { RequestUsage } from '../core/usage';
import type { PaidCall } from '../store/paid-calls';
import type { SessionStore } from '../store/types';

/** A billed attempt whose ledger row is not written yet. */
export interface UnrecordedAttempt {
  attempt: number;
  /** What the provider reported for it; null when it reported nothing (counted at the worst case). */
  usage: RequestUsage | null;
}

/** What a model step's heartbeats say about billing (beside ModelStepHeartbeat's fields). */
export interface BillingHeartbeat {
  /** The attempt that sent these details. */
  attempt: number;
  /** The provider accepted this attempt's request and is answering it: it is billed. */
  answering: boolean;
  /** The usage the provider reported for this attempt's answer, once its stream finished. */
  answeredUsage?: RequestUsage;
  /** Billed attempts (this one's earlier ones) still to be written to the ledger. */
  unrecorded: UnrecordedAttempt[];
}

const usageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number(),
  cacheWriteTokens: z.number(),
});

const heartbeatSchema = z.object({
  attempt: z.number().int().positive(),
  answering: z.boolean(),
  answeredUsage: usageSchema.optional(),
  unrecorded: z.array(z.object({ attempt: z.number().int().positive(), usage: usageSchema.nullable() })),
});

/** Where a meter records: the ledger of one session, for one activity's attempts. */
export interface MeterContext {
  store: SessionStore;
  sessionId: string;
  model: string;
  /** The activity's identity in its workflow run (core/paid-calls.ts activityInstance). */
  instance: string;
  attempt: number;
  pricing: CallPricing | undefined;
  /** The heartbeat details of the attempt before this one, as Temporal hands them over. */
  previous: unknown;
}

/** The billing of one attempt of a model-step activity, and of the attempts before it that are not recorded yet. */
export class AttemptMeter {
  /** The provider is answering this attempt: it is billed. */
  answering = false;
  /** What the provider reported for this attempt's answer. */
  answeredUsage: RequestUsage | null = null;
  private pending: UnrecordedAttempt[];

  constructor(private readonly context: MeterContext) {
    this.pending = carriedOver(context.previous);
  }

  /** Every chunk of the provider's response comes by here (ModelRequest.onBytes). */
  onBytes(answering: boolean): void {
    if (answering) this.answering = true;
  }

  /** The billing part of this attempt's heartbeat details. */
  details(): BillingHeartbeat {
    return {
      attempt: this.context.attempt,
      answering: this.answering,
      ...(this.answeredUsage ? { answeredUsage: this.answeredUsage } : {}),
      unrecorded: this.pending,
    };
  }

  /**
   * The answer received by the attempt of ledger key `attemptKey` is stored as the step's answer: that
   * attempt is not a billed retry, whatever it recorded when it saw its write fail. Only this
   * activity's attempts are taken back: another one's were counted when it ended.
   */
  async answeredBy(attemptKey: string | undefined): Promise<void> {
    const { store, sessionId, instance } = this.context;
    if (!attemptKey?.startsWith(paidCallKeys.attempts(instance))) return;
    this.pending = this.pending.filter(
      (entry) => paidCallKeys.attempt(instance, entry.attempt) !== attemptKey,
    );
    await store.voidPaidAttempt(sessionId, attemptKey);
  }

  /** Records this attempt's answer in the ledger, under the step's answer key (once, however often asked). */
  async recordAnswer(assistantKey: string, usage: RequestUsage): Promise<void> {
    await this.context.store.recordPaidCall(this.answerCall(assistantKey, usage));
  }

  /** The ledger row of this attempt's answer, to write with the answer itself (MessageWriteOptions). */
  answerCall(assistantKey: string, usage: RequestUsage): PaidCall {
    const { sessionId, model, pricing } = this.context;
    const { costUsd } = billedAttempt(usage, pricing);
    return {
      sessionId,
      key: paidCallKeys.answer(assistantKey),
      kind: 'answer',
      model,
      usage,
      costUsd,
      atReservation: false,
    };
  }

  /**
   * This attempt fails (or is cancelled): when it was billed, its row goes to the ledger now, or, when
   * the store is away, with the heartbeat details to the next attempt. Never throws.
   */
  async failed(): Promise<void> {
    if (this.answering && !this.pending.some((entry) => entry.attempt === this.context.attempt)) {
      this.pending.push({ attempt: this.context.attempt, usage: this.answeredUsage });
    }
    await this.flush().catch((err: unknown) => {
      log.warn('billed attempts not recorded yet: the next attempt records them', {
        sessionId: this.context.sessionId,
        attempts: this.pending.map((entry) => entry.attempt),
        error: err instanceof Error ? err.message : String(err),
      });
    });
  }

  /** The attempts before this one that were billed without an answer, once all are in the ledger. */
  async billedBefore(): Promise<BilledAttempts | null> {
    await this.flush();
    const { store, sessionId, instance, attempt } = this.context;
    // The first attempt has none before it: no read on the path every step takes.
    if (attempt === 1) return null;
    return sumBilled(await store.paidCallsUnder(sessionId, paidCallKeys.attempts(instance)));
  }

  /** Writes the pending rows (idempotent: keyed by attempt); throws when the store refuses. */
  async flush(): Promise<void> {
    const { store, sessionId, model, instance, pricing } = this.context;
    while (this.pending.length > 0) {
      const entry = this.pending[0];
      const { usage, costUsd, atReservation } = billedAttempt(entry.usage, pricing);
      await store.recordPaidCall({
        sessionId,
        key: paidCallKeys.attempt(instance, entry.attempt),
        kind: 'retry',
        model,
        usage,
        costUsd,
        atReservation,
      });
      this.pending.shift();
    }
  }
}

/**
 * The billed attempts the attempt before this one left unrecorded, and that attempt itself when its
 * details say it was being answered (it may have died before it could record itself; a row it did
 * write has the same key, so it still counts once).
 */
function carriedOver(previous: unknown): UnrecordedAttempt[] {
  const parsed = heartbeatSchema.safeParse(previous);
  if (!parsed.success) return [];
  const { attempt, answering, answeredUsage, unrecorded } = parsed.data;
  const carried = [...unrecorded];
  if (answering && !carried.some((entry) => entry.attempt === attempt)) {
    carried.push({ attempt, usage: answeredUsage ?? null });
  }
  return carried;
}
