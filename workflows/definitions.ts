/**
 * Names shared by the workflow and its clients: queries, search attributes, the workflow type.
 * Durable contracts: renaming one breaks running goals and saved CLI scripts.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { PolicyView } from '../core/budget';
import type { GoalSnapshot } from '../core/goal';
import type { TaskView } from '../core/task-graph-types';
import type { CompactionResult } from './compaction';

/** The goal's live snapshot (status, counters, usage, recent actions). */
export const stateQuery = defineQuery<GoalSnapshot>('state');

/** Compacts the context now (stage 1, then stage 2); the argument is a focus topic, or '' for none. */
export const compactUpdate = defineUpdate<CompactionResult, [string]>('compact');

/** Turns auto-compact on or off; returns the policy view. */
export const setAutoCompactUpdate = defineUpdate<PolicyView | null, [boolean]>('setAutoCompact');

/** The context policy: window, threshold, used, status, auto-compact, failures (spec S-GAUGE). */
export const policyQuery = defineQuery<PolicyView | null>('policy');

/** The patch id that turns compaction on for goals started after it existed. */
export const COMPACTION_PATCH = 'context-compaction';

/** The task graph in dependency order, with derived blocked_by and ready. */
export const tasksQuery = defineQuery<TaskView[]>('tasks');

export const GoalStatusKey = defineSearchAttributeKey('GoalStatus', SearchAttributeType.KEYWORD);
export const GoalSessionKey = defineSearchAttributeKey('GoalSession', SearchAttributeType.KEYWORD);
export const GoalModelKey = defineSearchAttributeKey('GoalModel', SearchAttributeType.KEYWORD);
export const GoalIterationKey = defineSearchAttributeKey('GoalIteration', SearchAttributeType.INT);

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

/** Failure type of a goal that ended as failed (the workflow fails with it). */
export const GOAL_FAILED_TYPE = 'GoalFailed';
