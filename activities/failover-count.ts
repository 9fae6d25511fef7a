/**
 * The model step's side of failover (issue 27 §3): it counts the provider's failover-worthy failures
 * across the attempts of one step (Temporal's retries, the one retry loop), carried in the heartbeat
 * details as the unreachable clock is, and ends the step with a non-retryable ProviderOutage once the
 * workflow's rule (core/failover.ts) says the goal should move to its backup.
 *
 * The last heartbeat before a failure can be lost (the server may drop a heartbeat recorded just
 * before the attempt's failure: temporalio/temporal#8376), and then the next attempt would count one
 * failure too few and ask the failing provider once more than the rule says. So the heartbeat also
 * names the last attempt it accounts for, and an attempt that finds earlier ones unaccounted for reads
 * their model-error events, which each failed attempt writes before it ends.
 */
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { FailureType } from '../core/errors';
import {
  type FailoverRule,
  type FailureRun,
  failoverDue,
  isFailoverReason,
  NO_FAILURES,
  nextFailureRun,
} from '../core/failover';
import { storeKeys } from '../core/store-keys';
import { plural } from '../core/text';
import type { SessionStore } from '../store/types';
import { providerStatusOf } from './providers/errors';
import type { ModelStepInput } from './types';

/** What a model step's heartbeat carries for the rule. */
export interface FailoverHeartbeat {
  failoverFailures: number;
  failoverSinceMs: number | null;
  /** The last attempt whose outcome the run accounts for (0: none yet). */
  failoverSeenAttempt: number;
}

const heartbeatSchema = z.object({
  failoverFailures: z.number().int().nonnegative(),
  failoverSinceMs: z.number().finite().nullable(),
  // A worker of an earlier version sent no attempt: its run is taken as complete, as it was then.
  failoverSeenAttempt: z.number().int().nonnegative().optional(),
});

/** The run an earlier attempt's heartbeat carried, and the last attempt it accounts for. */
export interface CarriedRun {
  run: FailureRun;
  seenAttempt: number;
}

/**
 * The run of failures the heartbeat of an earlier attempt carried into `attempt` (none when it
 * carried none, so that attempts before it are unaccounted for).
 */
export function failureRunOf(details: unknown, attempt: number): CarriedRun {
  const parsed = heartbeatSchema.safeParse(details);
  if (!parsed.success) return { run: NO_FAILURES, seenAttempt: 0 };
  const { failoverFailures, failoverSinceMs, failoverSeenAttempt } = parsed.data;
  return {
    run: { failures: failoverFailures, sinceMs: failoverSinceMs },
    seenAttempt: failoverSeenAttempt ?? attempt - 1,
  };
}

/** The run as heartbeat fields, accounting for the attempts up to `seenAttempt`. */
export function failoverHeartbeat(run: FailureRun, seenAttempt: number): FailoverHeartbeat {
  return { failoverFailures: run.failures, failoverSinceMs: run.sinceMs, failoverSeenAttempt: seenAttempt };
}

/** What a failed attempt's model-error event says, as far as the count goes. */
export interface RecordedFailure {
  /** Whether the failure counted toward failover; events without it (earlier versions) did not say. */
  failover?: boolean;
  atMs: number;
}

/** Reads what the model-error event under `key` recorded for the count (null: no such event). */
export async function recordedFailure(
  store: Pick<SessionStore, 'getEventByKey'>,
  sessionId: string,
  key: string,
): Promise<RecordedFailure | null> {
  const event = await store.getEventByKey(sessionId, key);
  if (!event) return null;
  const failover = (event.data as { failover?: unknown } | null)?.failover;
  return { ...(typeof failover === 'boolean' ? { failover } : {}), atMs: event.createdAt.getTime() };
}

/**
 * The run with the failures of the attempts after `carried.seenAttempt` and before `attempt` added,
 * as their model-error events recorded them. An attempt with no event (it crashed, or the store was
 * down) or one that does not say counts nothing, as before.
 */
export async function recoveredFailureRun(
  carried: CarriedRun,
  attempt: number,
  recorded: (attempt: number) => Promise<RecordedFailure | null>,
): Promise<FailureRun> {
  let run = carried.run;
  for (let earlier = carried.seenAttempt + 1; earlier < attempt; earlier++) {
    const failure = await recorded(earlier);
    if (failure?.failover) run = nextFailureRun(run, true, failure.atMs);
  }
  return run;
}

/**
 * Counts a failed attempt and, when the rule calls for the backup, turns its failure into a
 * non-retryable ProviderOutage naming why. Without a rule (no backup, or already on it) the failure
 * is thrown as it is. `counted`: whether this failure was one for failover.
 */
export function withFailover(
  failure: ApplicationFailure,
  run: FailureRun,
  rule: FailoverRule | undefined,
  nowMs: number,
): { failure: ApplicationFailure; run: FailureRun; counted: boolean } {
  const counted = isFailoverReason(failure.type ?? undefined, providerStatusOf(failure));
  const next = nextFailureRun(run, counted, nowMs);
  if (!rule || !failoverDue(next, rule, nowMs)) return { failure, run: next, counted };
  const minutes = next.sinceMs === null ? 0 : Math.floor((nowMs - next.sinceMs) / 60_000);
  const span = minutes > 0 ? ` over ${plural(minutes, 'minute')}` : '';
  return {
    run: next,
    counted,
    failure: ApplicationFailure.create({
      type: FailureType.ProviderOutage,
      message: `${plural(next.failures, 'provider failure')} in a row${span}; switching to the backup model. Last: ${failure.message}`,
      nonRetryable: true,
    }),
  };
}

/**
 * The run a model step's attempt starts from: its heartbeat's, with the failures of attempts whose
 * last heartbeat was lost read back from their model-error events (only for a step with a rule).
 */
export async function carriedFailureRun(
  store: Pick<SessionStore, 'getEventByKey'>,
  input: Pick<ModelStepInput, 'sessionId' | 'stepNumber' | 'failover'>,
  execution: number,
  info: { attempt: number; heartbeatDetails?: unknown },
): Promise<FailureRun> {
  const carried = failureRunOf(info.heartbeatDetails, info.attempt);
  if (!input.failover || carried.seenAttempt >= info.attempt - 1) return carried.run;
  return recoveredFailureRun(carried, info.attempt, (earlier) =>
    recordedFailure(store, input.sessionId, storeKeys.modelErrorEvent(execution, input.stepNumber, earlier)),
  );
}
