/**
 * Failover to the backup model in the goal workflow (issue 27 §3; runs of PATCH.failover). The
 * workflow decides which model each step uses: its durable state (state.failover) says whether the
 * goal is on its primary or its backup, since when, and when it probes the primary again. A step
 * whose activity gave up with ProviderOutage (the rule counted in activities/failover-count.ts) moves
 * the goal to the backup; the step runs again there, after the budget is resolved for the backup's
 * card and the goal has compacted if the backup's window is smaller (the step boundary does both, as
 * after a /model). After the cooldown, one step probes the primary; one success keeps the goal there.
 */
import { log } from '@temporalio/workflow';
import { FailureType } from '../core/errors';
import { EVENT_KINDS } from '../core/event-kinds';
import {
  type FailoverRule,
  type FailoverState,
  isFailoverReason,
  type ModelRoute,
  primaryAnswered,
  probeDue,
  probingPrimary,
  stepFailoverRule,
  switchedToBackup,
} from '../core/failover';
import type { GoalDefinition } from '../core/goal';
import { clip } from '../core/text';
import type { SummarizerFallback } from './compaction-host';
import { failureDetail, failureType, innermostMessage } from './failures';
import type { GoalRun } from './goal-run-port';
import { PATCH } from './patches';

/** Longest provider message a failover event quotes. */
const REASON_CHARS = 300;

/** The rule the step's activity applies, or undefined (no backup, on the backup, or a run before the patch). */
export function stepFailover(run: GoalRun): FailoverRule | undefined {
  if (!run.features[PATCH.failover]) return undefined;
  const { goal, failover } = run.state;
  return stepFailoverRule(goal.backupModel, failover, goal.failover) ?? undefined;
}

/** Whether a step's failure moves the goal to its backup. */
export function isOutage(run: GoalRun, err: unknown): boolean {
  return (
    run.features[PATCH.failover] &&
    failureType(err) === FailureType.ProviderOutage &&
    !!run.state.goal.backupModel &&
    run.state.failover?.active !== 'backup'
  );
}

/** Moves the goal to its backup after step `stepNumber` gave up on the primary; the step runs again there. */
export async function switchToBackup(run: GoalRun, stepNumber: number, err: unknown): Promise<void> {
  const { goal } = run.state;
  const backup = backupRoute(goal);
  const from = routeOf(goal);
  const failover = switchedToBackup(run.state.failover, from, Date.now(), goal.failover);
  const reason = innermostMessage(err);
  useRoute(run, backup, failover);
  const text = `step ${stepNumber} · failover: ${from.model} → ${backup.model} (${reason})`;
  run.session.note(text);
  log.warn('failover to the backup model', { from: from.model, to: backup.model });
  await recordSwitch(run, stepNumber, from, backup, 'backup', reason);
}

/** At a step boundary: when the goal is on its backup and the cooldown is over, the next step probes the primary. */
export async function probeAtBoundary(run: GoalRun): Promise<void> {
  if (!run.features[PATCH.failover]) return;
  const failover = run.state.failover;
  if (!failover || !probeDue(failover, Date.now())) return;
  const from = routeOf(run.state.goal);
  const stepNumber = run.state.steps + 1;
  useRoute(run, failover.primary, probingPrimary(failover));
  run.session.note(`step ${stepNumber} · failover: probing ${failover.primary.model} after the cooldown`);
  await recordSwitch(run, stepNumber, from, failover.primary, 'probe', 'the cooldown is over');
}

/** After a step answered: a probe of the primary that succeeded brings the goal back for good. */
export async function afterAnswer(run: GoalRun, stepNumber: number): Promise<void> {
  const failover = run.state.failover;
  if (!run.features[PATCH.failover] || !failover?.probing) return;
  run.state = { ...run.state, failover: primaryAnswered(failover) };
  const to = routeOf(run.state.goal);
  run.session.note(`step ${stepNumber} · failover: back on ${to.model}`);
  await recordSwitch(run, stepNumber, backupRoute(run.state.goal), to, 'primary', 'the probe succeeded');
}

/**
 * The summarizer's failover: a summarizer model of its own that failed for a reason to switch hands
 * the summary to the goal's model (the primary, or the backup while the goal is on it), on its card.
 * A goal whose model summarizes follows the goal's own failover.
 */
export function summarizerFallback(run: GoalRun, failed: string, err: unknown): SummarizerFallback | null {
  const type = failureType(err);
  const status = (failureDetail(err, type ?? '') as { status?: unknown } | undefined)?.status;
  if (!isFailoverReason(type, typeof status === 'number' ? status : undefined)) return null;
  const { goal, compaction } = run.state;
  if (failed === goal.model) return null;
  run.session.note(`the summarizer ${failed} is down; the summary goes to ${goal.model}`);
  return {
    model: goal.model,
    ...(goal.baseUrl ? { baseUrl: goal.baseUrl } : {}),
    card: compaction?.card ?? null,
  };
}

/** After a /model: the model a person chose is the primary now, at the primary's base URL. */
export function forgetFailover(run: GoalRun): void {
  const failover = run.state.failover;
  if (!run.features[PATCH.failover] || !failover) return;
  const { baseUrl: _backup, ...goal } = run.state.goal;
  const baseUrl = failover.primary.baseUrl;
  run.state = { ...run.state, goal: { ...goal, ...(baseUrl ? { baseUrl } : {}) }, failover: null };
}

/** Where the goal's backup model's requests go. */
function backupRoute(goal: GoalDefinition): ModelRoute {
  return {
    model: goal.backupModel ?? goal.model,
    ...(goal.backupBaseUrl ? { baseUrl: goal.backupBaseUrl } : {}),
  };
}

function routeOf(goal: GoalDefinition): ModelRoute {
  return { model: goal.model, ...(goal.baseUrl ? { baseUrl: goal.baseUrl } : {}) };
}

/**
 * The goal's steps (and its summarizer, when it has none of its own) use `route` from now on. The
 * budget and card are resolved anew at the next step boundary, which compacts first when the new
 * window is smaller, as after a /model.
 */
function useRoute(run: GoalRun, route: ModelRoute, failover: FailoverState): void {
  const { baseUrl: _old, ...goal } = run.state.goal;
  const compaction = run.state.compaction;
  run.state = {
    ...run.state,
    goal: { ...goal, model: route.model, ...(route.baseUrl ? { baseUrl: route.baseUrl } : {}) },
    failover,
    modelNote: null,
    ...(compaction ? { compaction: { ...compaction, budget: null, card: null } } : {}),
  };
}

/** Every switch is an event (docs/events.md), saved with the state that made it. */
async function recordSwitch(
  run: GoalRun,
  step: number,
  from: ModelRoute,
  to: ModelRoute,
  direction: 'backup' | 'probe' | 'primary',
  reason: string,
): Promise<void> {
  const switches = run.state.failover?.switches ?? 0;
  await run.saveState(false, {
    kind: EVENT_KINDS.failover,
    data: { step, from: from.model, to: to.model, direction, reason: clip(reason, REASON_CHARS), switches },
    key: `failover:${switches}:${direction}@${run.execution}`,
  });
}
