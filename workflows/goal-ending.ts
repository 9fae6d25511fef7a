/**
 * How a goal's execution ends: with a status (completed, blocked, at a limit, failed, cleared), or
 * cancelled, after a cleanup that leaves no call without a result and saves a kept-progress summary.
 * Either way running jobs are killed, a checkpoint and a goal-ended event are saved, the UI is told.
 */
import { EVENT_KINDS } from '../core/event-kinds';
import type { GoalEndedCheck, GoalEndedData } from '../core/event-log';
import type { GoalStatus } from '../core/goal';
import { keptProgressSummary } from '../core/goal-messages';
import { isVerified } from '../core/goal-snapshot';
import { spentOf } from '../core/spend-cap';
import { storeKeys } from '../core/store-keys';
import type { CheckOutcome } from '../core/verify';
import type { GoalRun } from './goal-run-port';

/** Ends the goal with a status: jobs killed, a checkpoint and an event saved, the UI told. */
export async function endGoal(run: GoalRun, status: GoalStatus, reason: string | null): Promise<void> {
  await run.onEnding(status);
  if (!run.opened) await run.open();
  await run.killJobs();
  run.session.setStatus(status, reason);
  run.session.note(`goal ${status}${reason ? `: ${reason}` : ''}`);
  run.session.stopClock();
  run.timeLimit.disarm();
  run.publish();
  const ended: GoalEndedData = {
    status,
    reason,
    summary: run.state.finishSummary,
    steps: run.state.steps,
    iterations: run.state.iteration,
    elapsedMs: run.session.elapsedMs(),
    // Its sub-agents' spend included (issue 27 §2).
    costUsd: spentOf(run.state).costUsd,
    usage: run.state.usage,
    verified: isVerified({ status, verification: run.state.verification }),
    checks: (run.state.verification?.checks ?? []).map(checkFacts),
  };
  // The answer of the `finish` that ended it, when held (PATCH.finishAnsweredAtEnd), in the same write.
  const answer = run.heldAnswer ?? undefined;
  await run.saveState(
    true,
    { kind: EVENT_KINDS.goalEnded, data: ended, key: storeKeys.goalEnded(run.execution) },
    answer,
  );
  if (answer) run.heldAnswer = null;
}

/** What the goal-ended event keeps of a check: no output, only its reference. */
function checkFacts(check: CheckOutcome): GoalEndedCheck {
  return {
    command: check.command,
    exitCode: check.exitCode,
    ok: check.ok,
    ...(check.problem ? { problem: check.problem } : {}),
    ...(check.spool ? { spool: check.spool } : {}),
  };
}

/** The cleanup of a cancelled goal: answered calls, a kept-progress summary, status cancelled. */
export async function endCancelledGoal(run: GoalRun): Promise<void> {
  if (!run.opened) await run.open();
  // A cancelled goal waits for nobody: its pending escalation is denied, or status would show it forever.
  const pending = run.state.approval;
  if (pending) {
    run.session.approvalAnswered('denied', 'the goal was cancelled');
    await run.saveState(false, {
      kind: 'approval',
      data: {
        toolCallId: pending.toolCallId,
        command: pending.command,
        decision: 'denied',
        reason: 'the goal was cancelled',
        by: 'cancel',
      },
      key: storeKeys.approvalEvent(pending.toolCallId),
    });
  }
  // The first call without a result is the one the cancellation cut short (the calls before it
  // were answered in order); the step's own runningTool is already cleared when the cancellation gets here.
  const interrupted = run.unanswered[0]?.summary ?? run.state.runningTool;
  await run.answerUnanswered('the goal was cancelled while this tool was running');
  const summary = keptProgressSummary({ ...run.state, runningTool: interrupted }, run.session.elapsedMs());
  run.session.keptProgress = summary;
  // Saved at once (spec S-SAVE: on interrupt, immediately, with a kept-progress summary).
  await run.saveState(false, {
    kind: 'kept-progress',
    data: { summary },
    key: storeKeys.keptProgressEvent(run.execution),
  });
  await endGoal(run, 'cancelled', 'cancelled by request');
}
