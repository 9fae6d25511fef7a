/**
 * The names clients use to reach a goal workflow, as plain values: workflow ids and query names.
 * Kept apart from workflows/definitions.ts so the CLI's read-only commands can name them without loading the
 * Temporal SDK (they talk to Temporal's HTTP API; issue 10). Durable contracts, like workflows/definitions.ts. In core/ because the
 * CLI, the activities (clean) and the workflow all name them.
 */
import type { PolicyView } from './budget';
import type { GoalSnapshot } from './goal-snapshot';
import type { JobRecord } from './jobs-registry';
import type { TaskView } from './task-graph-types';

/** A query's name, typed with its answer (what the SDK's defineQuery gives, without the SDK). */
export interface QueryName<Result> {
  readonly name: string;
  /** Never set: carries the answer's type. */
  readonly answer?: Result;
}

/** The goal's live snapshot (status, counters, usage, recent actions). */
export const STATE_QUERY: QueryName<GoalSnapshot> = { name: 'state' };
/** The context policy: window, threshold, used, status, auto-compact, failures (spec S-GAUGE). */
export const POLICY_QUERY: QueryName<PolicyView | null> = { name: 'policy' };
/** The goal's background jobs (spec S-JOBS). */
export const JOBS_QUERY: QueryName<JobRecord[]> = { name: 'jobs' };
/** The task graph in dependency order, with derived blocked_by and ready. */
export const TASKS_QUERY: QueryName<TaskView[]> = { name: 'tasks' };

/** The signal a foreground process sends on its way out to give its goal's steps back (workflows/definitions.ts: hostSignal). */
export const HOST_SIGNAL_NAME = 'hostQueued';

/** The workflow type of a goal. */
export const GOAL_WORKFLOW_TYPE = 'goalWorkflow';

/** Workflow ids are derived from session ids so either one finds the goal. */
export const WORKFLOW_ID_PREFIX = 'goalrun-';

/** The workflow id of a session. */
export function workflowIdOf(sessionId: string): string {
  return `${WORKFLOW_ID_PREFIX}${sessionId}`;
}

/** The session id of a goalrun workflow id, or the input unchanged when it is already a session id. */
export function sessionIdOf(id: string): string {
  return id.startsWith(WORKFLOW_ID_PREFIX) ? id.slice(WORKFLOW_ID_PREFIX.length) : id;
}

/** Failure type of a goal that ended as failed: its workflow fails with it (the final snapshot in its details). */
export const GOAL_FAILED_TYPE = 'GoalFailed';
/** Failure type of a goal that ended as blocked (patch `goal-end-failure`): its workflow fails with it. */
export const GOAL_BLOCKED_TYPE = 'GoalBlocked';
/** The failure types a goal's own ending gives its workflow; the final snapshot is their first detail. */
export const GOAL_END_FAILURE_TYPES: readonly string[] = [GOAL_FAILED_TYPE, GOAL_BLOCKED_TYPE];
