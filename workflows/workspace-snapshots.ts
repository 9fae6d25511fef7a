/**
 * Per-step workspace snapshots (issue 17 §3): at the end of every step, one activity on the goal's
 * tool queue records a git workspace as a commit under refs/goalrun/<session>/<step>, which
 * `goalrun fork --at-step N` checks out. Cheap, and never the reason a goal fails: a snapshot that
 * cannot be taken is a note. Runs that started before this (patch off) take none.
 *
 * Since 0.3.0 (patch snapshotGuard, issue 24) the repository the workspace was in when the goal
 * started is kept in state.snapshots: a repository the model makes later (`git init`, a nested one)
 * is never snapshotted, across continue-as-new and resume, and the snapshots stop at the goal's cap.
 */
import { ActivityFailure, isCancellation } from '@temporalio/workflow';
import type { WorkspaceRepository } from '../activities/workspace-snapshot';
import { afterSnapshot, snapshotCaps, startSnapshots } from '../core/workspace-snapshot-state';
import { toolActivities } from './activities-proxy';
import { writeNotice } from './boundary';
import { innermostMessage } from './failures';
import type { GoalRun } from './goal-run-port';
import { PATCH } from './patches';
import { onToolHost } from './workspace-context';

/**
 * Records the repository the goal's workspace is in, once per goal: when an execution starts and the
 * state has none (a new goal; a fork into a worktree of its own; a goal of an older build).
 */
export async function recordSnapshotRepository(run: GoalRun): Promise<void> {
  if (!run.features[PATCH.workspaceSnapshots] || !run.features[PATCH.snapshotGuard]) return;
  if (run.state.snapshots) return;
  // The gathering already found no repository: nothing to ask.
  if (run.noSnapshots !== null) {
    run.state = { ...run.state, snapshots: startSnapshots(null) };
    return;
  }
  const { goal } = run.state;
  let found: WorkspaceRepository;
  try {
    found = await onToolHost(run, (placement) =>
      toolActivities('find the workspace repository', goal.toolTaskQueue, placement).workspaceRepository({
        workspace: goal.workspace,
      }),
    );
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    found = {
      repository: null,
      refused: `the tool host could not say which repository the workspace is in: ${innermostMessage(err)}`,
    };
  }
  run.state = { ...run.state, snapshots: startSnapshots(found.repository, found.refused ?? null) };
  if (found.refused) await writeNotice(run, `no workspace snapshots for this goal: ${found.refused}`);
}

/** Takes the snapshot of the step the goal just ended (its `steps` counter), when the run takes the patched path. */
export async function snapshotAfterStep(run: GoalRun): Promise<void> {
  if (!run.features[PATCH.workspaceSnapshots] || run.noSnapshots !== null) return;
  const guarded = run.features[PATCH.snapshotGuard];
  const known = run.state.snapshots;
  if (guarded && (!known?.repository || known.stopped !== null)) return;
  const { goal, steps } = run.state;
  if (steps < 1) return;
  const caps = snapshotCaps(goal.snapshots);
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
        sandboxMode: goal.sandbox?.mode,
        maxFileBytes: caps.maxFileBytes,
        ...(guarded && known?.repository ? { repository: known.repository } : {}),
      }),
    );
    if (!result.taken) {
      // A plain folder stays one (or a refusing tool host stays so): asked once an execution, so its
      // steps cost no activity, and said once.
      run.noSnapshots = result.reason;
      if (guarded && known && result.refused) {
        // Refused (a repository made during the goal, a pointer elsewhere): never again this goal.
        run.state = { ...run.state, snapshots: { ...known, stopped: result.reason } };
        await writeNotice(run, `workspace snapshots stopped: ${result.reason}`);
      } else {
        run.session.note(`no workspace snapshots: ${result.reason}`);
      }
      return;
    }
    if (guarded && known) {
      const next = afterSnapshot(known, result, caps);
      run.state = { ...run.state, snapshots: next.state };
      if (next.note) run.session.note(`step ${steps} · ${next.note}`);
      if (next.notice) await writeNotice(run, next.notice);
    }
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    run.session.note(`step ${steps} · the workspace snapshot failed: ${innermostMessage(err)}`);
  }
}
