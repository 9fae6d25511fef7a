/**
 * The hooks the workflow calls (issue 19): the stop hooks when the model calls `finish` (exit 2
 * keeps the goal going, with the hook's stderr as the result of the call), the notify hooks when the
 * status changes to one that needs a person, and stopping the goal's MCP servers when it ends. Each
 * runs only for patched runs whose tool host reported such hooks or servers, so goals without them
 * emit no extra command. A notify that fails is a note: it never stops the goal.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  isCancellation,
  proxyActivities,
} from '@temporalio/workflow';
import type { GoalActivities } from '../activities/workflow-activities';
import { breakdownTotal } from '../core/cost';
import { EVENT_KINDS } from '../core/event-kinds';
import { NOTIFY_STATUSES, notifyStatus } from '../core/extensions/notify-status';
import { recordToolOutcome } from '../core/goal-rules';
import { clip } from '../core/text';
import { TOOL } from '../core/tool-names';
import type { WorkflowToolCall, WorkflowToolOutcome } from '../core/workflow-tools';
import { toolActivities } from './activities-proxy';
import { innermostMessage } from './failures';
import { notifyPeople } from './goal-notifications';
import type { GoalRun } from './goal-run-port';
import type { Placement } from './host-placement';
import { PATCH } from './patches';
import { onToolHost } from './workspace-context';

/** A notify activity gets this long in all, retries included: the goal waits for it, briefly. */
const NOTIFY_TIMEOUT = '3m';
/** Stopping a goal's MCP servers at its end: a tool host that is gone is not waited for long. */
const CLOSE_SERVERS_TIMEOUT = '2m';
/** Longest reason of a stop hook's veto kept in the result the model sees. */
const VETO_MAX_CHARS = 4_000;

/** The status of the last checkpoint, per run: a checkpoint that keeps the status tells nobody. */
const notified = new WeakMap<GoalRun, string>();

function notifyActivities(taskQueue: string | undefined, placement: Placement) {
  return proxyActivities<GoalActivities>({
    ...placedOn(placement),
    scheduleToCloseTimeout: NOTIFY_TIMEOUT,
    startToCloseTimeout: NOTIFY_TIMEOUT,
    retry: { maximumAttempts: 2 },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    taskQueue: taskQueue ?? placement.taskQueue,
    summary: 'notify hooks',
  });
}

function closeActivities(taskQueue: string | undefined, placement: Placement) {
  return proxyActivities<GoalActivities>({
    ...placedOn(placement),
    scheduleToCloseTimeout: CLOSE_SERVERS_TIMEOUT,
    startToCloseTimeout: CLOSE_SERVERS_TIMEOUT,
    retry: { maximumAttempts: 2 },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    taskQueue: taskQueue ?? placement.taskQueue,
    summary: 'stop the MCP servers',
  });
}

/** Whether the run takes the hooks' patched path with a context that names hooks or servers. */
function hooksOn(run: GoalRun): boolean {
  return run.features[PATCH.goalHooks] && run.state.workspaceContext !== undefined;
}

/**
 * After a checkpoint: tells the notify hooks about a status that needs a person (once per change),
 * and stops the goal's MCP servers when the checkpoint is the goal's end.
 */
export async function afterCheckpoint(run: GoalRun, eventKind: string | undefined): Promise<void> {
  await notifyPeople(run);
  if (!hooksOn(run)) return;
  const counts = run.state.workspaceContext;
  const { goal, status } = run.state;
  const changed = notified.get(run) !== status;
  // Every status is remembered, so a goal paused a second time (after running again) is told again.
  notified.set(run, status);
  if (changed && (counts?.notifyHooks ?? 0) > 0 && NOTIFY_STATUSES.includes(status)) {
    const payload = notifyStatus({
      sessionId: goal.sessionId,
      workflowId: run.workflowId,
      status,
      reason: run.state.reason,
      objective: goal.objective,
      costUsd: breakdownTotal(run.state.breakdown ?? {}).costUsd,
      steps: run.state.steps,
      iterations: run.state.iteration,
      approval: run.state.approval,
    });
    try {
      const input = {
        sessionId: goal.sessionId,
        workspace: goal.workspace,
        sandbox: goal.sandbox,
        key: `${run.execution}:${run.state.actions}:${status}`,
        status: { ...payload },
      };
      const result = await onToolHost(run, (placement) =>
        notifyActivities(goal.toolTaskQueue, placement).runNotifyHooks(input),
      );
      for (const line of result.failures) run.session.note(line);
    } catch (err) {
      if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
      run.session.note(`notify hooks did not run: ${innermostMessage(err)}`);
    }
  }
  // New-mode runs close the goal on its tool host at the end, so the sandbox's private /tmp is removed
  // there even when no server or job made that call before (issue 16); unless the host said it holds
  // nothing of the goal (a goal that only read files in a plain folder).
  const closeOnToolHost =
    (counts?.servers ?? 0) > 0 || (run.features[PATCH.commandQueue] && !nothingLeftOnToolHost(run));
  if (eventKind === EVENT_KINDS.goalEnded && closeOnToolHost) {
    try {
      await onToolHost(run, (placement) =>
        closeActivities(goal.toolTaskQueue, placement).killSessionJobs({ sessionId: goal.sessionId }),
      );
    } catch (err) {
      if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
      run.session.note(
        (counts?.servers ?? 0) > 0
          ? `the MCP servers could not be stopped (they stop when idle): ${innermostMessage(err)}`
          : `the goal's private /tmp on its tool host could not be removed: ${innermostMessage(err)}`,
      );
    }
  }
}

/** Whether the goal's end can skip the close on its tool host (patch close-only-what-is-left). */
function nothingLeftOnToolHost(run: GoalRun): boolean {
  return run.features[PATCH.closeOnlyWhatIsLeft] && run.toolHostClean && run.state.jobs.length === 0;
}

/**
 * The stop hooks of a `finish` call: a veto (exit 2) turns the call into a result that keeps the
 * goal going, with the hook's reason; any other outcome lets the call end the goal.
 */
export async function withStopHooks(
  run: GoalRun,
  call: WorkflowToolCall,
  outcome: WorkflowToolOutcome,
): Promise<WorkflowToolOutcome> {
  if (!outcome.finished || !hooksOn(run) || (run.state.workspaceContext?.stopHooks ?? 0) === 0)
    return outcome;
  const { goal } = run.state;
  let veto: string | null;
  try {
    const input = {
      sessionId: goal.sessionId,
      workspace: goal.workspace,
      sandbox: goal.sandbox,
      toolCallId: call.toolCallId,
      status: outcome.finished.status,
      summary: outcome.state.finishSummary ?? '',
    };
    const result = await onToolHost(run, (placement) =>
      toolActivities('stop hooks', goal.toolTaskQueue, placement).runStopHooks(input),
    );
    for (const line of result.failures) run.session.note(line);
    veto = result.veto;
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    run.session.note(`stop hooks did not run: ${innermostMessage(err)}`);
    return outcome;
  }
  if (veto === null) return outcome;
  const reason = clip(veto, VETO_MAX_CHARS);
  run.session.note(`a stop hook kept the goal going: ${reason.split('\n')[0]}`);
  return {
    state: recordToolOutcome(run.state, {
      toolName: TOOL.finish,
      summary: `${TOOL.finish}: kept going by a stop hook`,
      ok: false,
      changedWorkspace: false,
    }),
    ok: false,
    text: `[a stop hook kept the goal going; it is not finished] ${reason}`,
  };
}

/** The task queue and start deadline of a placement, as activity options. */
function placedOn(placement: Placement): { scheduleToStartTimeout?: number } {
  return placement.scheduleToStartTimeoutMs
    ? { scheduleToStartTimeout: placement.scheduleToStartTimeoutMs }
    : {};
}
