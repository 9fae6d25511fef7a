/**
 * How many attempts a model step gets. Temporal retries the model activity with a backoff of 1 s
 * doubling to 60 s; the count must outlast provider_unreachable_minutes, so that the unreachable rule
 * (activities/providers/unreachable.ts) decides when an outage ends the goal, not the count.
 */
import { DEFAULT_PROVIDER_UNREACHABLE_MINUTES, MODEL_STEP_MAX_ATTEMPTS } from './limits';

/** Attempts of a model step for a goal's provider_unreachable_minutes (default when unset). */
export function modelStepAttempts(goal: { providerUnreachableMinutes?: number }): number {
  const minutes = goal.providerUnreachableMinutes ?? DEFAULT_PROVIDER_UNREACHABLE_MINUTES;
  // 1+2+4+8+16+32 s come first, then one attempt a minute.
  return Math.max(MODEL_STEP_MAX_ATTEMPTS, 7 + Math.ceil(minutes) + 1);
}
