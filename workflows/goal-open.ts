/**
 * A new goal's open: its session row and first message, and, for runs of PATCH.openInOneCall, in the
 * same local activity its model budget and the store's daily cap. Each local activity is an activation
 * of the workflow and a marker in its history, so a goal that starts with one instead of three costs
 * less on the worker and the server (issue 25 item 5, issue 30).
 */
import { applyBudget, budgetRequestOf } from './compaction';
import { compactionOf } from './compaction-host';
import { noDailyCapSeen } from './daily-budget-gate';
import { compactionHostOf } from './goal-compaction-host';
import type { GoalRun } from './goal-run-port';
import { PATCH } from './patches';

/** Opens the new session of this execution; see the module comment for what else it asks. */
export async function openNewSession(run: GoalRun): Promise<void> {
  if (!run.features[PATCH.openInOneCall]) {
    await run.open();
    return;
  }
  const budget = budgetRequestOf(run.state) ?? undefined;
  const dailyCap = run.features[PATCH.dailyBudget] ? true : undefined;
  const opened = await run.open({ budget, dailyCap });
  // After the open: it set the compaction state that counts from the first message.
  if (opened.budget) applyBudget(compactionHostOf(run), opened.budget, compactionOf(run.state));
  if (opened.dailyCapUsd === null) noDailyCapSeen(run);
}
