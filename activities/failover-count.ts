/**
 * The model step's side of failover (issue 27 §3): it counts the provider's failover-worthy failures
 * across the attempts of one step (Temporal's retries, the one retry loop), carried in the heartbeat
 * details as the unreachable clock is, and ends the step with a non-retryable ProviderOutage once the
 * workflow's rule (core/failover.ts) says the goal should move to its backup.
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
import { plural } from '../core/text';
import { providerStatusOf } from './providers/errors';

/** What a model step's heartbeat carries for the rule. */
export interface FailoverHeartbeat {
  failoverFailures: number;
  failoverSinceMs: number | null;
}

const heartbeatSchema = z.object({
  failoverFailures: z.number().int().nonnegative(),
  failoverSinceMs: z.number().finite().nullable(),
});

/** The run of failures an earlier attempt's heartbeat carried (none when it carried none). */
export function failureRunOf(details: unknown): FailureRun {
  const parsed = heartbeatSchema.safeParse(details);
  return parsed.success
    ? { failures: parsed.data.failoverFailures, sinceMs: parsed.data.failoverSinceMs }
    : NO_FAILURES;
}

/** The run as heartbeat fields. */
export function failoverHeartbeat(run: FailureRun): FailoverHeartbeat {
  return { failoverFailures: run.failures, failoverSinceMs: run.sinceMs };
}

/**
 * Counts a failed attempt and, when the rule calls for the backup, turns its failure into a
 * non-retryable ProviderOutage naming why. Without a rule (no backup, or already on it) the failure
 * is thrown as it is.
 */
export function withFailover(
  failure: ApplicationFailure,
  run: FailureRun,
  rule: FailoverRule | undefined,
  nowMs: number,
): { failure: ApplicationFailure; run: FailureRun } {
  const next = nextFailureRun(
    run,
    isFailoverReason(failure.type ?? undefined, providerStatusOf(failure)),
    nowMs,
  );
  if (!rule || !failoverDue(next, rule, nowMs)) return { failure, run: next };
  const minutes = next.sinceMs === null ? 0 : Math.floor((nowMs - next.sinceMs) / 60_000);
  const span = minutes > 0 ? ` over ${plural(minutes, 'minute')}` : '';
  return {
    run: next,
    failure: ApplicationFailure.create({
      type: FailureType.ProviderOutage,
      message: `${plural(next.failures, 'provider failure')} in a row${span}; switching to the backup model. Last: ${failure.message}`,
      nonRetryable: true,
    }),
  };
}
