/**
 * Where the goal workflow learns what its model calls were billed besides the answers it used (issue
 * 24 item 4). The activities record every billed attempt in the store's ledger as it happens
 * (activities/paid-attempts.ts, activities/summary-ledger.ts); the workflow adds them to the goal's
 * spend once, when the activity has ended: from the result of the attempt that answered (`billed`),
 * or, when the activity gave up or was stopped, from a billedAttempts local activity that reads the
 * ledger (runs of PATCH.paidCalls). The spend then counts against the money and token caps and shows
 * in `stats`; the ledger itself is the daily budget's.
 */
import { ActivityFailure, TimeoutFailure, workflowInfo } from '@temporalio/workflow';
import type { ModelStepResult } from '../activities/types';
import type { ModelCard } from '../core/model-card';
import {
  activityInstance,
  type BilledAttempts,
  type CallPricing,
  callPricing,
  withBilledAttempts,
} from '../core/paid-calls';
import { currentPressure } from './compaction-host';
import type { GoalRun } from './goal-run-port';
import { PATCH } from './patches';

/** How the next model step is priced for the ledger: its card's prices and its worst case. */
export function stepPricing(run: GoalRun): CallPricing {
  return callPricing(run.state.compaction?.card ?? null, currentPressure(run.state));
}

/**
 * Runs one model-step activity (`call`) and counts what its attempts were billed besides the answer,
 * priced as `model` on `card` (as the step counts its answer).
 */
export async function countingBilled(
  run: GoalRun,
  priced: { model: string; card: ModelCard | null; pricing: CallPricing },
  call: () => Promise<ModelStepResult>,
): Promise<ModelStepResult> {
  try {
    const result = await call();
    run.state = withBilledAttempts(run.state, priced.model, result.billed, priced.card);
    return result;
  } catch (err) {
    if (run.features[PATCH.paidCalls]) {
      const billed = await billedOnGiveUp(run, 'step', priced, err);
      run.state = withBilledAttempts(run.state, priced.model, billed, priced.card);
    }
    throw err;
  }
}

/**
 * Counts what a model step lost with its foreground host was billed (host-placement.ts): the step is
 * asked again as a new activity, whose result counts only its own attempts.
 */
export async function countLostStep(
  run: GoalRun,
  priced: { model: string; card: ModelCard | null; pricing: CallPricing },
  err: unknown,
): Promise<void> {
  if (!run.features[PATCH.paidCalls]) return;
  const billed = await billedOnGiveUp(run, 'step', priced, err);
  run.state = withBilledAttempts(run.state, priced.model, billed, priced.card);
}

/**
 * What an activity that ended without an answer was billed, read from the ledger; null when the
 * failure is not an activity's (nothing was called). Runs even when the goal is being cancelled.
 */
export async function billedOnGiveUp(
  run: Pick<GoalRun, 'state' | 'store'>,
  kind: 'step' | 'summary',
  priced: { model: string; pricing: CallPricing },
  err: unknown,
): Promise<BilledAttempts | null> {
  const failure = activityFailureIn(err);
  if (!failure?.activityId) return null;
  const { activityId } = failure;
  const timeout = failure.cause instanceof TimeoutFailure ? failure.cause : null;
  return run.store.billedAttempts({
    sessionId: run.state.goal.sessionId,
    model: priced.model,
    instance: activityInstance(workflowInfo().runId, activityId),
    kind,
    pricing: priced.pricing,
    ...(timeout?.lastHeartbeatDetails !== undefined ? { lastHeartbeat: timeout.lastHeartbeatDetails } : {}),
  });
}

/** The activity failure in an error's cause chain (a step may wrap it), if any. */
function activityFailureIn(err: unknown): ActivityFailure | null {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current; depth++) {
    if (current instanceof ActivityFailure) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}
