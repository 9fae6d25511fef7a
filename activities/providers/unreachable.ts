/**
 * How long a model provider has been unreachable, across the attempts of one model step. The clock
 * starts at the first refused connection (or DNS failure), not when the step was scheduled: time a
 * goal spent waiting for a worker is not time the provider was down. Any answer from the provider
 * (an HTTP error, a stream that broke later) stops the clock. The start time travels from attempt to
 * attempt in the activity's heartbeat details, which Temporal hands to the next attempt.
 */
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { FailureType } from '../../core/errors';
import { DEFAULT_PROVIDER_UNREACHABLE_MINUTES } from '../../core/limits';
import { plural } from '../../core/text';
import { MAX_RETRY_AFTER_MS, toActivityFailure } from './errors';

/** What a model step sends with its heartbeats. */
export interface ModelStepHeartbeat {
  step: number;
  /** Characters of the answer received so far. */
  received: number;
  /** When the provider was first found unreachable in the current run of failures (epoch ms), or null. */
  unreachableSinceMs: number | null;
}

const heartbeatSchema = z.object({ unreachableSinceMs: z.number().finite().nullable().optional() });

/** The unreachable-since time carried in a previous attempt's heartbeat details, if any. */
export function unreachableSinceOf(details: unknown): number | null {
  const parsed = heartbeatSchema.safeParse(details);
  return parsed.success ? (parsed.data.unreachableSinceMs ?? null) : null;
}

/**
 * The unreachable-since time after an attempt failed: kept (or started now) when the provider could
 * not be reached at all, cleared when it answered, however badly.
 */
export function nextUnreachableSince(
  sinceMs: number | null,
  unreachableNow: boolean,
  nowMs: number,
): number | null {
  if (!unreachableNow) return null;
  return sinceMs ?? nowMs;
}

/** How long the provider has been unreachable, or null when it was not; `giveUp` once that reaches the limit. */
export function unreachableFor(
  sinceMs: number | null,
  nowMs: number,
  limitMinutes: number,
): { unreachableMs: number; giveUp: boolean } | null {
  if (sinceMs === null) return null;
  const unreachableMs = Math.max(0, nowMs - sinceMs);
  return { unreachableMs, giveUp: unreachableMs >= limitMinutes * 60_000 };
}

/**
 * The failure a model step ends with. A provider that cannot be reached at all is retried like any
 * outage until it has been unreachable for `providerUnreachableMinutes` (counted from
 * `unreachableSinceMs`); then the goal fails with a reason that says so, instead of retrying until
 * the goal's time limit.
 */
export function modelStepFailure(
  err: unknown,
  input: { model: string; providerUnreachableMinutes?: number; waitsOutQuota?: boolean },
  unreachableSinceMs: number | null,
  nowMs: number,
): ApplicationFailure {
  const [provider, ...rest] = input.model.split(':');
  const classified =
    err instanceof ApplicationFailure
      ? err
      : toActivityFailure(err, { provider: provider ?? input.model, model: rest.join(':') });
  const failure = input.waitsOutQuota ? classified : quotaAsOutage(classified, nowMs);
  if (failure.nonRetryable) return failure;
  const minutes = input.providerUnreachableMinutes ?? DEFAULT_PROVIDER_UNREACHABLE_MINUTES;
  const unreachable = unreachableFor(unreachableSinceMs, nowMs, minutes);
  if (!unreachable?.giveUp) return failure;
  return ApplicationFailure.create({
    type: FailureType.ProviderUnreachable,
    message: `the model provider could not be reached for ${plural(Math.round(unreachable.unreachableMs / 60_000), 'minute')} (provider_unreachable_minutes is ${minutes}): ${failure.message}`,
    nonRetryable: true,
  });
}

/**
 * For a goal whose workflow cannot wait out a quota (started by 0.1.0): an exhausted quota is the
 * retryable outage it was then, retried after the reset time (at most MAX_RETRY_AFTER_MS).
 */
function quotaAsOutage(failure: ApplicationFailure, nowMs: number): ApplicationFailure {
  if (failure.type !== FailureType.QuotaExhausted) return failure;
  const resetAtMs = (failure.details?.[0] as { resetAtMs?: unknown } | undefined)?.resetAtMs;
  const waitMs = typeof resetAtMs === 'number' ? Math.max(0, resetAtMs - nowMs) : undefined;
  return ApplicationFailure.create({
    type: FailureType.ProviderUnavailable,
    message: failure.message,
    nonRetryable: false,
    ...(waitMs !== undefined ? { nextRetryDelay: Math.min(waitMs, MAX_RETRY_AFTER_MS) } : {}),
  });
}
