/**
 * Names shared by the workflow and its clients: queries, search attributes, the workflow type.
 * Durable contracts: renaming one breaks running goals and saved CLI scripts.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery } from '@temporalio/workflow';
import type { GoalSnapshot } from '../core/goal';
import type { TaskView } from '../core/task-graph-types';

/** The goal's live snapshot (status, counters, usage, recent actions). */
export const stateQuery = defineQuery<GoalSnapshot>('state');

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
