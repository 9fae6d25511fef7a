/**
 * Verified completion (issue 27 §1, patch verified-completion): a `finish` complete of a goal with
 * checks runs them on the tool host before it may end the goal. All pass: the goal ends completed
 * and verified. One fails: the call's result says which and how (output spooled), the goal goes on,
 * the iteration counts as no progress, and the goal ends blocked at the goal's failed-finish limit.
 * A check that cannot run at all has failed too (fails closed).
 */
import { ActivityFailure, isCancellation } from '@temporalio/workflow';
import { recordToolOutcome } from '../core/goal-rules';
import { TOOL } from '../core/tool-names';
import {
  type CheckOutcome,
  checkLines,
  checksBlockedReason,
  checksFailedText,
  checksPassed,
  DEFAULT_VERIFY_MAX_FAILURES,
  DEFAULT_VERIFY_TIMEOUT_S,
} from '../core/verify';
import type { WorkflowToolCall, WorkflowToolOutcome } from '../core/workflow-tools';
import { verifyActivities } from './activities-proxy';
import { innermostMessage } from './failures';
import type { GoalRun } from './goal-run-port';
import { PATCH } from './patches';
import { onToolHost } from './workspace-context';

/** Runs the goal's checks when the call would end it completed; returns the outcome they allow. */
export async function withVerification(
  run: GoalRun,
  call: WorkflowToolCall,
  outcome: WorkflowToolOutcome,
): Promise<WorkflowToolOutcome> {
  const verify = run.state.goal.verify;
  if (!run.features[PATCH.verifiedCompletion] || outcome.finished?.status !== 'completed') return outcome;
  if (!verify || verify.checks.length === 0) return outcome;
  const { goal } = run.state;
  const timeoutS = verify.timeoutS ?? DEFAULT_VERIFY_TIMEOUT_S;
  const maxFailures = verify.maxFailures ?? DEFAULT_VERIFY_MAX_FAILURES;
  let checks: CheckOutcome[];
  try {
    const input = {
      sessionId: goal.sessionId,
      workspace: goal.workspace,
      sandbox: goal.sandbox,
      toolCallId: call.toolCallId,
      checks: verify.checks,
      timeoutS,
    };
    const result = await onToolHost(run, (placement) =>
      verifyActivities(timeoutS * 1000 * verify.checks.length, goal.toolTaskQueue, placement).runVerifyChecks(
        input,
      ),
    );
    checks = result.checks;
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    // Fails closed: checks that could not be run have not passed.
    const problem = `could not run: ${innermostMessage(err)}`;
    checks = verify.checks.map((command) => ({ command, exitCode: null, ok: false, problem, tail: '' }));
  }
  const before = run.state.verification;
  const passed = checksPassed(checks, verify.checks.length);
  if (passed) {
    run.session.note(`checks passed: ${checks.map((check) => check.command).join(', ')}`);
    return {
      ...outcome,
      state: { ...outcome.state, verification: { failures: before?.failures ?? 0, checks, passed: true } },
      text: [`${outcome.text}; every check passed`, ...checkLines(checks)].join('\n'),
    };
  }
  const failures = (before?.failures ?? 0) + 1;
  const verification = { failures, checks, passed: false };
  run.session.note(`finish refused: checks failed (${failures} of ${maxFailures})`);
  // The claim did not hold: the iteration made no progress, whatever else it did.
  const state = {
    ...recordToolOutcome(run.state, {
      toolName: TOOL.finish,
      summary: `${TOOL.finish}: checks failed`,
      ok: false,
      changedWorkspace: false,
    }),
    iterationProgress: false,
    verification,
  };
  const text = checksFailedText(checks, failures, maxFailures);
  if (failures >= maxFailures) {
    return {
      state: { ...state, finishSummary: outcome.state.finishSummary },
      ok: false,
      text,
      finished: { status: 'blocked', reason: checksBlockedReason(checks, failures) },
    };
  }
  return { state, ok: false, text };
}
