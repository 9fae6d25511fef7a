/**
 * Names shared by the workflow and its clients: queries, search attributes, the workflow type.
 * Durable contracts: renaming one breaks running goals and saved CLI scripts.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { AgentTasksRequest } from '../core/agent-tasks';
import type { PolicyView } from '../core/budget';
import type { SteeringRequest } from '../core/goal';
import type { GoalSnapshot } from '../core/goal-snapshot';
import type { JobRecord } from '../core/jobs-registry';
import type { TaskView } from '../core/task-graph-types';
import { HOST_SIGNAL_NAME, JOBS_QUERY, POLICY_QUERY, STATE_QUERY, TASKS_QUERY } from '../core/workflow-names';
import type { CompactionResult } from './compaction';

export { sessionIdOf, WORKFLOW_ID_PREFIX, workflowIdOf } from '../core/workflow-names';

/** The goal's live snapshot (status, counters, usage, recent actions). */
export const stateQuery = defineQuery<GoalSnapshot>(STATE_QUERY.name);

/** Compacts the context now (stage 1, then stage 2); the argument is a focus topic, or '' for none. */
export const compactUpdate = defineUpdate<CompactionResult, [string]>('compact');

/** Turns auto-compact on or off; returns the policy view. */
export const setAutoCompactUpdate = defineUpdate<PolicyView | null, [boolean]>('setAutoCompact');

/** The context policy: window, threshold, used, status, auto-compact, failures (spec S-GAUGE). */
export const policyQuery = defineQuery<PolicyView | null>(POLICY_QUERY.name);

/** What a steering update did: a message stored for the model, or an app command handled by goalrun. */
export type SteerResult =
  | {
      kind: 'message';
      /** Sequence number of the stored steering message (-1 for a repeat whose first delivery is gone). */
      seq: number;
      /** True when a message with this id had been delivered already. */
      duplicate?: boolean;
      /** Set when the goal ended before the message could be delivered: why, and what to do. */
      undelivered?: string;
      /** The goal was paused by the runaway breaker, and this message let it go on. */
      unpaused?: true;
      /** The goal is paused and stays so (a person paused it): why; `goalrun unpause` moves it on. */
      paused?: string;
    }
  | {
      kind: 'command';
      command: string;
      /** What the command did, for the sender. */
      text: string;
      compaction?: CompactionResult;
      /** The session /clear started. */
      newSessionId?: string;
    };

/**
 * Steers a running goal (spec F-CMDS): a message delivered to the model before its next step, or an
 * app command (`/pause`, `/limits …`, …) that goalrun handles and the model never sees.
 */
export const steerUpdate = defineUpdate<SteerResult, [SteeringRequest]>('steer');

/** The same as the steer update for a goal no worker runs now: durable at once, delivered later. */
export const steerSignal = defineSignal<[SteeringRequest]>('steerQueued');

/** Who hosts a goal's steps: a foreground `run`/`resume` process's queue, or null to give them back. */
export interface HostRequest {
  queue: string | null;
  /** Who asks, e.g. `alice@build-box`. */
  from: string;
}

/** A foreground process takes a running goal's steps (`resume` attaching to it); returns what happens. */
export const hostUpdate = defineUpdate<string, [HostRequest]>('host');

/** The same without waiting: a foreground process that stops gives the goal's steps back. */
export const hostSignal = defineSignal<[HostRequest]>(HOST_SIGNAL_NAME);

/** A human's answer to an escalation out of the sandbox. */
export interface ApprovalAnswer {
  decision: 'approve' | 'deny';
  reason?: string;
  /** Who answered, e.g. `alice@build-box`. */
  from: string;
}

/** Answers the escalation a goal waits for; returns what happens next. */
export const approvalUpdate = defineUpdate<string, [ApprovalAnswer]>('answerApproval');

/** A sub-agent's todo-write, sent by the child to its parent (issue 27 §2): the parent applies it in order. */
export const agentTasksSignal = defineSignal<[AgentTasksRequest]>('agentTasks');

/** The goal's background jobs (spec S-JOBS). */
export const jobsQuery = defineQuery<JobRecord[]>(JOBS_QUERY.name);

/** The task graph in dependency order, with derived blocked_by and ready. */
export const tasksQuery = defineQuery<TaskView[]>(TASKS_QUERY.name);

export const GoalStatusKey = defineSearchAttributeKey('GoalStatus', SearchAttributeType.KEYWORD);
export const GoalSessionKey = defineSearchAttributeKey('GoalSession', SearchAttributeType.KEYWORD);
export const GoalModelKey = defineSearchAttributeKey('GoalModel', SearchAttributeType.KEYWORD);
export const GoalIterationKey = defineSearchAttributeKey('GoalIteration', SearchAttributeType.INT);
/**
 * The GoalIteration a goal is started with: its state's first iteration (initialGoalState), so the
 * workflow has nothing to upsert until the iteration or status changes (patch start-attributes-published).
 */
export const START_ITERATION = 1;

export { GOAL_BLOCKED_TYPE, GOAL_FAILED_TYPE } from '../core/workflow-names';
