/**
 * Per-step workspace snapshots (issue 17 §3): at the end of every step, one activity on the goal's
 * tool queue records a git workspace as a commit under refs/goalrun/<session>/<step>, which
 * `goalrun fork --at-step N` checks out. Cheap, and never the reason a goal fails: a snapshot that
 * cannot be taken is a note. Runs that started before this (patch off) take none.
 */
import { ActivityFailure, isCancellation } from '@temporalio/workflow';
import { toolActivities } from './activities-proxy';
import { innermostMessage } from './failures';
import type { GoalRun } from './goal-run-port';
import { PATCH } from './patches';
import { onToolHost } from './workspace-context';

/** Takes the snapshot of the step the goal just ended (its `steps` counter), when the run takes the patched path. */
export async function snapshotAfterStep(run: GoalRun): Promise<void> {
  if (!run.features[PATCH.workspaceSnapshots] || run.noSnapshots !== null) return;
  const { goal, steps } = run.state;
  if (steps < 1) return;
  try {
    const result = await onToolHost(run, (placement) =>
      toolActivities(
        `snapshot the workspace · step ${steps}`,
        goal.toolTaskQueue,
        placement,
      ).snapshotWorkspace({
        sessionId: goal.sessionId,
        workspace: goal.workspace,
        step: steps,
      }),
    );
    // A plain folder stays one (or a refusing tool host stays so): asked once an execution, so its
    // steps cost no activity, and said once.
    if (!result.taken) {
      run.noSnapshots = result.reason;
      run.session.note(`no workspace snapshots: ${result.reason}`);
    }
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    run.session.note(`step ${steps} · the workspace snapshot failed: ${innermostMessage(err)}`);
  }
}
