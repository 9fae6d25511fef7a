/**
 * The step boundary of goals started before the command queue (patch `command-queue`): handlers
 * carry out app commands themselves and the loop delivers steering, runs queued compactions and
 * waits. Kept as it was, so those goals replay; remove once the patch is.
 */
import { allHandlersFinished, condition } from '@temporalio/workflow';
import type { StopDecision } from '../../core/goal-rules';
import { enterPause, LIMIT_WAIT_MS, resumeFromPause, startFreshSession, writeNotice } from '../boundary';
import { ensureBudget } from '../compaction';
import { compactionHostOf } from '../goal-compaction-host';
import { endGoal } from '../goal-ending';
import type { GoalRun } from '../goal-run-port';
import type { CompactionControl } from './compaction-control';
import type { LoopRequests } from './steering';

/** Runs everything due between steps; a paused goal waits here (holding no worker). */
export async function stepBoundary(
  run: GoalRun,
  control: CompactionControl,
  loop: LoopRequests,
): Promise<void> {
  for (;;) {
    await run.deliverPendingSteering();
    await writeNotes(run, loop);
    await ensureBudget(compactionHostOf(run));
    await control.beforeStep(run.state.steps + 1);
    if (!run.state.paused || loop.clear.requested) {
      if (run.state.status === 'paused') await resumeFromPause(run);
      return;
    }
    if (run.state.status !== 'paused') await enterPause(run);
    await condition(
      () =>
        !run.state.paused ||
        loop.clear.requested ||
        run.session.pendingSteering.length > 0 ||
        control.hasPending() ||
        loop.notes.length > 0,
    );
  }
}

/** Writes the notes queued by commands (a model switch) into the transcript. */
async function writeNotes(run: GoalRun, loop: LoopRequests): Promise<void> {
  while (loop.notes.length > 0) await writeNotice(run, loop.notes.shift()!);
}

/**
 * A goal at a limit waits, its clock and jobs stopped, for /limits to raise it (or for /clear or a
 * cancellation). True when it may go on; false when the wait ran out and the goal has ended.
 */
export async function waitAtLimit(run: GoalRun, stop: StopDecision, loop: LoopRequests): Promise<boolean> {
  run.session.setStatus('limit_reached', stop.reason);
  run.session.note(`limit reached: ${stop.reason}; waiting for /limits`);
  run.session.stopClock();
  run.timeLimit.disarm();
  await run.killJobs();
  run.publish();
  await run.saveState(true, { kind: 'limit-reached', data: { reason: stop.reason, limit: stop.limit } });
  const raised = await condition(
    () => loop.clear.requested || run.session.stopDecision()?.status !== 'limit_reached',
    LIMIT_WAIT_MS,
  );
  if (!raised) {
    await endGoal(run, 'limit_reached', stop.reason);
    return false;
  }
  if (loop.clear.requested) return true;
  run.session.setStatus('running');
  run.session.note('limits raised; going on');
  run.session.startClock();
  run.timeLimit.arm(run.session.remainingMs());
  run.publish();
  await run.saveState(true, { kind: 'limits-raised', data: { limits: run.state.goal.limits } });
  return true;
}

/**
 * Before continue-as-new every handler must be done, and some only finish at a step boundary
 * (a queued compaction, a steering message): run those until none is left. False when a /clear
 * arrived meanwhile (the loop handles it instead).
 */
export async function drainForContinueAsNew(
  run: GoalRun,
  control: CompactionControl,
  loop: LoopRequests,
): Promise<boolean> {
  for (;;) {
    await run.deliverPendingSteering();
    await writeNotes(run, loop);
    await control.runPending(run.state.steps + 1);
    if (loop.clear.requested) return false;
    if (allHandlersFinished()) return true;
    await condition(
      () =>
        allHandlersFinished() ||
        run.session.pendingSteering.length > 0 ||
        control.hasPending() ||
        loop.notes.length > 0 ||
        loop.clear.requested,
    );
  }
}

/**
 * /clear (spec S-CLEAR): this session ends as `cleared` (and stays resumable), and a fresh session
 * starts on the same workspace with the same objective, as its own workflow.
 */
export async function clearSession(run: GoalRun, loop: LoopRequests): Promise<void> {
  const sessionId = await startFreshSession(run);
  await endGoal(run, 'cleared', `cleared; the goal goes on in session ${sessionId}`);
  loop.clear.newSessionId = sessionId;
}
