/** Starts a goal workflow with its Web UI metadata and search attributes, and says so as `start` does. */
import type { GoalDefinition, GoalLimits } from '../core/goal';
import { workflowIdOf } from '../workflows/definitions';
import { goalStartMetadata } from '../workflows/goal-start-metadata';
import type { GoalWorkflowInput } from '../workflows/goal-workflow';
import type { CliContext } from './context';
import { notice, printJson, say } from './output';
import { shortIdFor } from './short-ids';
import { hasLiveWorker, noWorkerMessage } from './worker-presence';

/** Ids of a started goal, as `start --json` prints them. */
export interface StartedGoal {
  sessionId: string;
  workflowId: string;
  runId: string;
  /** The task queue a worker must poll to run it. */
  taskQueue: string;
}

/** Starts a new execution of a goal (a new goal, or a resumed one with `resume`). */
export async function startGoal(
  context: CliContext,
  goal: GoalDefinition,
  options: {
    resume?: boolean;
    limitsOverride?: Partial<GoalLimits>;
    resumeMessage?: string;
    trustProject?: boolean;
  } = {},
): Promise<StartedGoal> {
  const client = await context.temporal();
  const workflowId = workflowIdOf(goal.sessionId);
  // A process that hosts a worker runs this goal's steps itself, and no other goal's.
  const hostQueue = context.hostQueue;
  if (hostQueue) context.hostsGoal(goal.sessionId);
  const input: GoalWorkflowInput = {
    goal: withHost(goal, hostQueue),
    resume: options.resume,
    limitsOverride: options.limitsOverride,
    ...(options.resumeMessage ? { resumeMessage: options.resumeMessage } : {}),
    ...(options.trustProject ? { trustProject: true } : {}),
  };
  const taskQueue = await context.taskQueue();
  const handle = await client.workflow.start('goalWorkflow', {
    workflowId,
    taskQueue,
    args: [input],
    ...goalStartMetadata(goal),
  });
  return { sessionId: goal.sessionId, workflowId, runId: handle.firstExecutionRunId, taskQueue };
}

/**
 * The goal as a new execution starts it: hosted by this process's queue, or by none. A saved goal
 * (`resume`, `start --name` of a stopped session) carries the queue of the process that ran it last,
 * which may be gone: its calls would wait there until they counted it gone (issue 26 item 6).
 */
export function withHost(goal: GoalDefinition, hostQueue: string | undefined): GoalDefinition {
  const { hostQueue: _previous, ...rest } = goal;
  return hostQueue ? { ...rest, hostQueue } : rest;
}

/** What `start` prints once a goal's execution has started, and the warning when no worker runs it. */
export async function reportStarted(
  context: CliContext,
  started: StartedGoal,
  json?: boolean,
): Promise<number> {
  const shortId = await shortIdFor(context, started.sessionId);
  if (json) {
    printJson({ ...started, shortId });
  } else {
    say(`started goal ${shortId} (session ${started.sessionId}, workflow ${started.workflowId})`);
    say(`  a worker must be running:  ${context.workerHint()}`);
    say(`  follow it:                 goalrun watch ${shortId}`);
  }
  await warnIfNoWorker(context, started.taskQueue);
  return 0;
}

/** Warns (on stderr) when nobody polls the goal's task queue: the goal would wait silently. */
async function warnIfNoWorker(context: CliContext, taskQueue: string): Promise<void> {
  const client = await context.temporal();
  if ((await hasLiveWorker(client, taskQueue)) === false)
    notice(noWorkerMessage(taskQueue, context.workerHint()));
}
