/**
 * The workspace context of an execution (issue 15 §4, issue 19): at the start of a goal and after a
 * resume, one activity on the goal's tool queue gathers what the tool host knows about the workspace
 * (the environment snapshot, taken in the sandbox; the project instructions; the MCP servers' tools;
 * the hooks), stores it under (session, execution) and returns counts. The model step reads the rest
 * from the store. Runs that started before this (patch off) take the old path: nothing is gathered.
 * Where the tools run on the workflow's own queue, a local activity gathers instead (patch
 * gather-in-workflow-task): the same call, in the workflow task that opens the session.
 */
import { ActivityFailure, ApplicationFailure, isCancellation, TemporalFailure } from '@temporalio/workflow';
import type { GatherWorkspaceContextInput } from '../activities/extensions/extension-activities';
import { FailureType } from '../core/errors';
import type { WorkspaceContextSummary } from '../core/extensions/workspace-context';
import { plural } from '../core/text';
import { toolActivities, toolLocalActivities } from './activities-proxy';
import { innermostMessage } from './failures';
import type { GoalRun } from './goal-run-port';
import { onGoalHost, type Placement } from './host-placement';
import { PATCH } from './patches';

/**
 * Gathers this execution's workspace context when the run takes the patched path. A tool host that
 * cannot gather it (even after retries) is a note: the goal goes on without instructions, MCP tools
 * and hooks, rather than failing before its first step.
 */
export async function gatherWorkspaceContext(run: GoalRun): Promise<void> {
  if (!run.features[PATCH.workspaceContext]) return;
  const { goal } = run.state;
  let summary: WorkspaceContextSummary;
  try {
    const input: GatherWorkspaceContextInput = {
      sessionId: goal.sessionId,
      execution: run.execution,
      workspace: goal.workspace,
      sandbox: goal.sandbox,
      sources: goal.extensions,
    };
    const onHost = () =>
      onToolHost(run, (placement) =>
        toolActivities('gather the workspace context', goal.toolTaskQueue, placement).gatherWorkspaceContext(
          input,
        ),
      );
    summary = gathersInWorkflowTask(run) ? await gatherInWorkflowTask(run, input, onHost) : await onHost();
  } catch (err) {
    // A local activity's failure comes as its own failure (an ApplicationFailure, a timeout), unwrapped.
    if (isCancellation(err) || !(err instanceof TemporalFailure)) throw err;
    run.session.note(`the tool host could not gather the workspace context: ${innermostMessage(err)}`);
    return;
  }
  const { notices, gitRepository, leftOnHost, ...counts } = summary;
  run.state = { ...run.state, workspaceContext: counts };
  run.toolHostClean = leftOnHost === false;
  // A plain folder takes no snapshots: known here, no step pays an activity to find it out.
  if (gitRepository === false && run.features[PATCH.workspaceSnapshots] && run.noSnapshots === null) {
    run.noSnapshots = 'the workspace is not a git repository';
    run.session.note(`no workspace snapshots: ${run.noSnapshots}`);
  }
  const parts = [
    plural(counts.instructionFiles, 'instruction file'),
    ...(counts.servers > 0
      ? [`${plural(counts.servers, 'MCP server')} (${plural(counts.tools, 'tool')})`]
      : []),
  ];
  run.session.note(`workspace context: ${parts.join(', ')}`);
  for (const text of notices) run.session.note(text);
}

/**
 * Whether this execution gathers in its workflow task (PATCH.gatherInWorkflowTask): only where the
 * goal's tools run on the workflow's own queue. A tools queue is another host, and a foreground
 * host runs the goal's calls while another process may run its workflow tasks.
 */
function gathersInWorkflowTask(run: GoalRun): boolean {
  const { goal } = run.state;
  return run.features[PATCH.gatherInWorkflowTask] && !goal.toolTaskQueue && !goal.hostQueue;
}

/**
 * Gathers as a local activity: no activity and no workflow task of its own before the session opens.
 */
async function gatherInWorkflowTask(
  run: GoalRun,
  input: GatherWorkspaceContextInput,
  onHost: () => Promise<WorkspaceContextSummary>,
): Promise<WorkspaceContextSummary> {
  // As onToolHost: until the host says otherwise, the goal's end cleans up after it.
  run.toolHostClean = false;
  try {
    return await toolLocalActivities.gatherWorkspaceContext(input);
  } catch (err) {
    // A `--role model` worker took the workflow task: a tool host on the queue takes the activity.
    if (failureType(err) === FailureType.NotAToolHost) return onHost();
    throw err;
  }
}

/** The type of the application failure a local activity failed with, directly or as a cause. */
function failureType(err: unknown): string | undefined {
  const failure = err instanceof ActivityFailure ? err.cause : err;
  return failure instanceof ApplicationFailure ? (failure.type ?? undefined) : undefined;
}

/**
 * Runs a tool-host call where the goal's tools run: its tool host (`--tools-queue`), else the process
 * that hosts the goal in the foreground (while it is there), else the workflow's queue. The MCP
 * servers a gathering starts then live in the process that runs the goal's calls. The call counts as
 * one that may leave something on the host (a gathering then says whether it did).
 */
export function onToolHost<T>(run: GoalRun, call: (placement: Placement) => Promise<T>): Promise<T> {
  // A hook, a check, a snapshot or a worktree may leave something there that the goal's end removes.
  run.toolHostClean = false;
  return run.state.goal.toolTaskQueue ? call({}) : onGoalHost(run, call);
}
