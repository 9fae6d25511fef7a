/**
 * What Temporal alone knows about a goal before any worker has touched it: whether a worker polls
 * its task queue, whether a worker has picked the goal up, and what the goal was started with.
 * The session store has no row for a goal until its first workflow task has run.
 */
import type { GoalDefinition } from '../core/goal';
import { GOAL_WORKFLOW_TYPE, sessionIdOf } from '../core/workflow-names';
import type { GoalWorkflowInput } from '../workflows/goal-workflow';
import { readerOf, type TemporalSource } from './temporal-reader';

/**
 * A poller seen this recently counts as a live worker. Workers long-poll for about a minute, and
 * Temporal remembers a poller for minutes after it is gone, so the freshness decides.
 */
export const LIVE_POLLER_MS = 2 * 60_000;

/** Events read from the start of a history to see whether a worker has run its first task. */
const FIRST_EVENTS_PAGE = 50;

/** Running goals listed from Temporal at most (for `list` and id prefixes). */
const RUNNING_GOALS_LISTED = 100;

/** The line every command prints when nobody polls a goal's task queue. */
export function noWorkerMessage(taskQueue: string, hint = 'goalrun worker'): string {
  return `no worker is polling task queue ${taskQueue}; start one with: ${hint}`;
}

/**
 * How many workers polled the task queue within LIVE_POLLER_MS: for workflow tasks, or with
 * `activities` for activity tasks (a tools-only worker polls nothing else).
 */
export async function livePollers(
  source: TemporalSource,
  taskQueue: string,
  now = Date.now(),
  activities = false,
): Promise<number> {
  const times = await readerOf(source).pollerAccessTimes(taskQueue, activities ? 'activity' : 'workflow');
  return times.filter((ms) => ms > 0 && now - ms <= LIVE_POLLER_MS).length;
}

/** Whether a worker polls the queue; null when Temporal could not say (the check is advice only). */
export async function hasLiveWorker(source: TemporalSource, taskQueue: string): Promise<boolean | null> {
  try {
    return (await livePollers(source, taskQueue)) > 0;
  } catch {
    return null;
  }
}

/** Whether a tool host polls a tools queue (`--tools-queue`); null when Temporal could not say. */
export async function hasLiveToolHost(source: TemporalSource, toolsQueue: string): Promise<boolean | null> {
  try {
    return (await livePollers(source, toolsQueue, Date.now(), true)) > 0;
  } catch {
    return null;
  }
}

/** The line `run` and `start` print when nobody polls a goal's tools queue. */
export function noToolHostMessage(toolsQueue: string, workspace: string): string {
  return `no tool host is polling ${toolsQueue}: the goal waits at its first tool call until one does; start it on the machine that holds ${workspace} with: goalrun worker --role tools --workspace-root <a directory above the workspace>`;
}

/** What the first events of a goal's current run say. */
export interface FirstEvents {
  /** A worker has completed a workflow task of this run: the goal has started working. */
  pickedUp: boolean;
  /** The input the run was started with, when it could be read. */
  input: GoalWorkflowInput | null;
  /** When the run started. */
  startedAt: Date | null;
  taskQueue: string | null;
  /** Why a worker failed the run's last workflow task, when none completed since (see HistoryStart). */
  workflowTaskFailure: string | null;
}

/** Reads the first page of the current run's history. Throws when the workflow does not exist. */
export async function firstEvents(source: TemporalSource, workflowId: string): Promise<FirstEvents> {
  const start = await readerOf(source).historyStart(workflowId, FIRST_EVENTS_PAGE);
  return {
    pickedUp:
      start.workflowTaskCompleted ||
      // A page full of events without a completed task still means a worker was there (and failed).
      start.eventCount >= FIRST_EVENTS_PAGE,
    input: (start.input as GoalWorkflowInput | null) ?? null,
    startedAt: start.startedAt,
    taskQueue: start.taskQueue,
    workflowTaskFailure: start.workflowTaskFailure,
  };
}

/** A running goal as Temporal lists it. */
export interface RunningGoal {
  sessionId: string;
  workflowId: string;
  startedAt: Date;
  taskQueue: string;
}

/** The running goal workflows on a task queue, newest first. */
export async function runningGoals(source: TemporalSource, taskQueue: string): Promise<RunningGoal[]> {
  const query = `WorkflowType = '${GOAL_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue.replace(/'/g, "\\'")}'`;
  const listed = await readerOf(source).listWorkflows(query, RUNNING_GOALS_LISTED);
  return listed
    .map((info) => ({
      sessionId: sessionIdOf(info.workflowId),
      workflowId: info.workflowId,
      startedAt: info.startedAt,
      taskQueue: info.taskQueue,
    }))
    .sort((a, b) => b.startedAt.getTime() - a.startedAt.getTime());
}

/** The goal definition a run was started with, if its input could be read. */
export function goalOfInput(input: GoalWorkflowInput | null): GoalDefinition | null {
  return input?.goal ?? null;
}
