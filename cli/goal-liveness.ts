/**
 * Gathers what core/liveness.ts decides on for a running goal: the pollers of its task queue, its
 * pending activities and workflow task, and when its last step finished (from the store).
 */
import { EVENT_KINDS } from '../core/event-kinds';
import { DEFAULT_STALLED_AFTER_MINUTES } from '../core/limits';
import { type Liveness, livenessOf, stallClockStart } from '../core/liveness';
import { workflowIdOf } from '../core/workflow-names';
import type { SessionStore } from '../store/types';
import { readerOf, type TemporalSource, type WorkflowSummary } from './temporal-reader';

/** The events that mark a finished step. */
const STEP_KINDS = [EVENT_KINDS.modelUsage, EVENT_KINDS.tool];

/** What liveness needs besides Temporal's description. */
export interface LivenessInput {
  sessionId: string;
  /** The goal's status in its state. */
  status: string;
  summary: WorkflowSummary;
  store: SessionStore;
  /** When the current run started, when known: the stall clock starts no earlier (stallClockStart). */
  runStartedMs?: number | null;
  /** Config stalled_after_minutes. */
  stalledAfterMinutes?: number;
  now?: number;
}

/** When a worker last polled a task queue, for workflow or activity tasks; null: never; undefined: unknown. */
async function lastPoll(source: TemporalSource, taskQueue: string): Promise<number | null | undefined> {
  try {
    const reader = readerOf(source);
    const [workflow, activity] = await Promise.all([
      reader.pollerAccessTimes(taskQueue, 'workflow'),
      reader.pollerAccessTimes(taskQueue, 'activity'),
    ]);
    const times = [...workflow, ...activity];
    return times.length === 0 ? null : Math.max(...times);
  } catch {
    return undefined;
  }
}

/** The liveness of a running goal; every read that fails counts as "nothing known". */
export async function goalLiveness(source: TemporalSource, input: LivenessInput): Promise<Liveness> {
  const { summary } = input;
  const now = input.now ?? Date.now();
  const [lastPollMs, workflowTaskFailure, lastStep] = await Promise.all([
    lastPoll(source, summary.taskQueue),
    (summary.workflowTaskAttempt ?? 0) > 1
      ? readerOf(source)
          .lastWorkflowTaskFailure(workflowIdOf(input.sessionId))
          .catch(() => null)
      : Promise.resolve(null),
    input.store.lastEventAt(input.sessionId, STEP_KINDS).catch(() => null),
  ]);
  return livenessOf({
    now,
    status: input.status,
    taskQueue: summary.taskQueue,
    lastPollMs,
    activities: summary.pendingActivities,
    workflowTaskFailure,
    lastStepMs: stallClockStart(lastStep?.getTime() ?? null, input.runStartedMs ?? null),
    stallAfterMs: (input.stalledAfterMinutes ?? DEFAULT_STALLED_AFTER_MINUTES) * 60_000,
  });
}
