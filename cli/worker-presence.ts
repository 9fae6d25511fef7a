/**
 * What Temporal alone knows about a goal before any worker has touched it: whether a worker polls
 * its task queue, whether a worker has picked the goal up, and what the goal was started with.
 * The session store has no row for a goal until its first workflow task has run.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { GoalDefinition } from '../core/goal';
import { sessionIdOf } from '../workflows/definitions';
import type { GoalWorkflowInput } from '../workflows/goal-workflow';

/**
 * A poller seen this recently counts as a live worker. Workers long-poll for about a minute, and
 * Temporal remembers a poller for minutes after it is gone, so the freshness decides.
 */
export const LIVE_POLLER_MS = 2 * 60_000;

/** Events read from the start of a history to see whether a worker has run its first task. */
const FIRST_EVENTS_PAGE = 50;

/** Running goals listed from Temporal at most (for `list` and id prefixes). */
const RUNNING_GOALS_LISTED = 100;

const EventType = temporal.api.enums.v1.EventType;

/** The line every command prints when nobody polls a goal's task queue. */
export function noWorkerMessage(taskQueue: string, hint = 'goalrun worker'): string {
  return `no worker is polling task queue ${taskQueue}; start one with: ${hint}`;
}

/**
 * How many workers polled the task queue within LIVE_POLLER_MS: for workflow tasks, or with
 * `activities` for activity tasks (a tools-only worker polls nothing else).
 */
export async function livePollers(
  client: Client,
  taskQueue: string,
  now = Date.now(),
  activities = false,
): Promise<number> {
  const { TaskQueueType } = temporal.api.enums.v1;
  const response = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: activities
      ? TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY
      : TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (response.pollers ?? []).filter((poller) => {
    const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
    return seconds > 0 && now - seconds * 1000 <= LIVE_POLLER_MS;
  }).length;
}

/** Whether a worker polls the queue; null when Temporal could not say (the check is advice only). */
export async function hasLiveWorker(client: Client, taskQueue: string): Promise<boolean | null> {
  try {
    return (await livePollers(client, taskQueue)) > 0;
  } catch {
    return null;
  }
}

/** Whether a tool host polls a tools queue (`--tools-queue`); null when Temporal could not say. */
export async function hasLiveToolHost(client: Client, toolsQueue: string): Promise<boolean | null> {
  try {
    return (await livePollers(client, toolsQueue, Date.now(), true)) > 0;
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
}

/** Reads the first page of the current run's history. Throws when the workflow does not exist. */
export async function firstEvents(client: Client, workflowId: string): Promise<FirstEvents> {
  const response = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId },
    maximumPageSize: FIRST_EVENTS_PAGE,
  });
  const events = response.history?.events ?? [];
  const started = events.find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  const attributes = started?.workflowExecutionStartedEventAttributes;
  let input: GoalWorkflowInput | null = null;
  const payload = attributes?.input?.payloads?.[0];
  if (payload) {
    try {
      input = client.options.loadedDataConverter.payloadConverter.fromPayload<GoalWorkflowInput>(payload);
    } catch {
      input = null;
    }
  }
  const pickedUp =
    events.some((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) ||
    // A page full of events without a completed task still means a worker was there (and failed).
    events.length >= FIRST_EVENTS_PAGE;
  const seconds = Number(started?.eventTime?.seconds ?? 0);
  return {
    pickedUp,
    input,
    startedAt: seconds > 0 ? new Date(seconds * 1000) : null,
    taskQueue: attributes?.taskQueue?.name ?? null,
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
export async function runningGoals(client: Client, taskQueue: string): Promise<RunningGoal[]> {
  const goals: RunningGoal[] = [];
  const query = `WorkflowType = 'goalWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue.replace(/'/g, "\\'")}'`;
  for await (const info of client.workflow.list({ query, pageSize: RUNNING_GOALS_LISTED })) {
    goals.push({
      sessionId: sessionIdOf(info.workflowId),
      workflowId: info.workflowId,
      startedAt: info.startTime,
      taskQueue: info.taskQueue,
    });
    if (goals.length >= RUNNING_GOALS_LISTED) break;
  }
  return goals.sort((a, b) => b.startedAt.getTime() - a.startedAt.getTime());
}

/** The goal definition a run was started with, if its input could be read. */
export function goalOfInput(input: GoalWorkflowInput | null): GoalDefinition | null {
  return input?.goal ?? null;
}
