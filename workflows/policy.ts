/** The policy view of a goal's context (spec S-GAUGE), from its compaction state. */
import { type PolicyView, policyView } from '../core/budget';
import type { GoalState } from '../core/goal';
import { compactionOf, currentPressure } from './compaction';

/** The policy view, or null before the model's budget is known. */
export function policyOf(state: GoalState): PolicyView | null {
  const compaction = compactionOf(state);
  if (!compaction.budget) return null;
  const { autoCompact } = compaction;
  return policyView({
    budget: compaction.budget,
    usedTokens: currentPressure(state),
    autoCompact: {
      enabled: autoCompact.enabled,
      failures: autoCompact.consecutiveFailures,
      maxFailures: autoCompact.maxFailures,
      paused: autoCompact.paused,
    },
  });
}
