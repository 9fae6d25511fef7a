/** The policy view of a goal's context (spec S-GAUGE), from its compaction state. */
import { type PolicyView, policyView } from '../core/budget';
import { controlStateSize } from '../core/compaction/state-size';
import { compactionTargets } from '../core/compaction/targets';
import type { GoalState } from '../core/goal';
import { compactionOf, currentPressure } from './compaction';

/** The policy view, or null before the model's budget is known. */
export function policyOf(state: GoalState): PolicyView | null {
  const compaction = compactionOf(state);
  if (!compaction.budget) return null;
  const { autoCompact } = compaction;
  const view = policyView({
    budget: compaction.budget,
    usedTokens: currentPressure(state),
    autoCompact: {
      enabled: autoCompact.enabled,
      failures: autoCompact.consecutiveFailures,
      maxFailures: autoCompact.maxFailures,
      paused: autoCompact.paused,
    },
  });
  return { ...view, lowWaterTokens: compactionTargets(compaction.budget, autoCompact).targetTokens };
}

/** The policy view with the control state's size: measured only when someone asks (it serializes the state). */
export function policyWithStateSize(state: GoalState): PolicyView | null {
  const view = policyOf(state);
  if (!view) return null;
  const size = controlStateSize(state);
  return {
    ...view,
    controlState: {
      bytes: size.bytes,
      ledgerEntries: size.ledgerEntries,
      ledgerMessages: size.ledgerMessages,
      budgetBytes: size.budgetBytes,
    },
  };
}
