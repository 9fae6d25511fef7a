/**
 * Verified completion (issue 27 §1, patch verified-completion): a `finish` complete of a goal with
 * checks runs them on the tool host before it may end the goal. All pass: the goal ends completed
 * and verified. One fails: the call's result says which and how (output spooled), the goal goes on,
 * the iteration counts as no progress, and the goal ends blocked at the goal's failed-finish limit.
 * A check that cannot run at all has failed too (fails closed).
 */
import { ActivityFailure, isCancellation } from '@temporalio/workflow';
import { recordToolOutcome } from '../core/goal-rules';
import { storeKeys } from '../core/store-keys';
import { plural } from '../core/text';
import { TOOL } from '../core/tool-names';
import {
  type CheckOutcome,
  checkLines,
  checksBlockedReason,
  checksFailedText,
  checksPassed,
  DEFAULT_VERIFY_MAX_FAILURES,
  DEFAULT_VERIFY_TIMEOUT_S,
  droppedParts,
  narrowedText,
  SIGN_OFF_WAIT_MINUTES,
  signOffRequest,
  type VerifySettings,
} from '../core/verify';
import type { WorkflowToolArgs } from '../core/workflow-tool-args';
import type { WorkflowToolCall, WorkflowToolOutcome } from '../core/workflow-tools';
import { verifyActivities } from './activities-proxy';
import type { ApprovalAnswer } from './definitions';
import { innermostMessage } from './failures';
import type { StepControl } from './goal-control';
import type { GoalRun } from './goal-run-port';
import { PATCH } from './patches';
import { onToolHost } from './workspace-context';

/** Runs the goal's checks when the call would end it completed; returns the outcome they allow. */
export async function withVerification(
  run: GoalRun,
  call: WorkflowToolCall,
  outcome: WorkflowToolOutcome,
  control: StepControl,
  args: WorkflowToolArgs,
): Promise<WorkflowToolOutcome> {
  const verify = run.state.goal.verify;
  if (!run.features[PATCH.verifiedCompletion] || outcome.finished?.status !== 'completed') return outcome;
  const parts = args.tool === TOOL.finish && args.parsed.ok ? args.parsed.args.objective_parts : undefined;
  const claimed = parts && parts.length > 0 ? withParts(run, outcome, parts) : outcome;
  if (!verify || claimed.finished?.status !== 'completed') return claimed;
  const checked = verify.checks.length > 0 ? await runChecks(run, call, claimed, verify) : claimed;
  if (checked.finished?.status !== 'completed') return checked;
  return (verify.signOff ?? []).length > 0
    ? askSignOff(run, call, checked, verify.signOff ?? [], control)
    : checked;
}

/**
 * The parts a finish claims: the first claim's are kept as the objective's parts; a later claim that
 * leaves one out narrows the objective, and the model is asked again (it counts as a failed finish).
 */
function withParts(run: GoalRun, outcome: WorkflowToolOutcome, parts: string[]): WorkflowToolOutcome {
  const first = run.state.objectiveParts;
  const dropped = first ? droppedParts(first, parts) : [];
  if (dropped.length === 0) {
    // Kept whatever the checks say next: a refused claim still named the objective's parts.
    if (!first) run.state = { ...run.state, objectiveParts: parts };
    return { ...outcome, state: { ...outcome.state, objectiveParts: first ?? parts, claimedParts: parts } };
  }
  run.session.note(`finish refused: it leaves out ${dropped.join('; ')}`);
  const before = run.state.verification ?? { failures: 0, checks: [], passed: false };
  const failures = before.failures + 1;
  const maxFailures = run.state.goal.verify?.maxFailures ?? DEFAULT_VERIFY_MAX_FAILURES;
  const state = {
    ...recordToolOutcome(run.state, {
      toolName: TOOL.finish,
      summary: `${TOOL.finish}: narrows the objective`,
      ok: false,
      changedWorkspace: false,
    }),
    iterationProgress: false,
    verification: { ...before, failures, passed: false },
  };
  const text = narrowedText(run.state.goal.objective, first ?? [], dropped);
  if (failures >= maxFailures) {
    return {
      state,
      ok: false,
      text,
      finished: {
        status: 'blocked',
        reason: `finish narrowed the objective ${plural(failures, 'time')}: it left out ${dropped.join('; ')}`,
      },
    };
  }
  return { state, ok: false, text };
}

/** Runs the checks; the outcome they allow (completed and verified, back to work, or blocked). */
async function runChecks(
  run: GoalRun,
  call: WorkflowToolCall,
  outcome: WorkflowToolOutcome,
  verify: VerifySettings,
): Promise<WorkflowToolOutcome> {
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

/**
 * A criterion only a person can judge: the goal waits in awaiting_user with the evidence (the
 * model's claim, the checks it passed), holding no worker. `goalrun approve` completes it (verified),
 * `deny --reason` sends the model back to work with the reason; no answer in SIGN_OFF_WAIT_MINUTES
 * ends it blocked.
 */
async function askSignOff(
  run: GoalRun,
  call: WorkflowToolCall,
  outcome: WorkflowToolOutcome,
  criteria: string[],
  control: StepControl,
): Promise<WorkflowToolOutcome> {
  const { approvals } = control;
  const checks = outcome.state.verification?.checks ?? [];
  const request = signOffRequest(criteria, outcome.state.finishSummary, checks, outcome.state.claimedParts);
  run.state = outcome.state;
  approvals.answer = null;
  run.session.requestApproval({ toolCallId: call.toolCallId, ...request }, SIGN_OFF_WAIT_MINUTES);
  run.state = {
    ...run.state,
    status: 'awaiting_user',
    reason: `the model says it is done; waiting for a person to sign off: ${criteria.join('; ')}`,
  };
  run.session.stopClock();
  run.timeLimit.disarm();
  run.publish();
  await run.saveState(true, {
    kind: 'approval-requested',
    data: { toolCallId: call.toolCallId, ...request },
    key: storeKeys.approvalRequestedEvent(call.toolCallId),
  });
  const answered = await control.waitInStep(() => approvals.answer !== null, SIGN_OFF_WAIT_MINUTES * 60_000);
  // Set by the approval command while the step waited (the compiler saw it cleared above).
  const reply = answered ? (approvals.answer as ApprovalAnswer | null) : null;
  approvals.answer = null;
  const approved = reply?.decision === 'approve';
  const why = reply ? (reply.reason ?? '') : `no answer within ${plural(SIGN_OFF_WAIT_MINUTES / 60, 'hour')}`;
  run.session.approvalAnswered(approved ? 'approved' : 'denied', why);
  run.session.startClock();
  run.timeLimit.arm(run.session.remainingMs());
  run.publish();
  await run.saveState(true, {
    kind: 'approval',
    data: {
      toolCallId: call.toolCallId,
      command: request.command,
      decision: approved ? 'approved' : 'denied',
      reason: reply?.reason ?? (reply ? null : why),
      by: reply?.from ?? 'timeout',
    },
    key: storeKeys.approvalEvent(call.toolCallId),
  });
  const verification = run.state.verification ?? { failures: 0, checks: [], passed: false };
  if (approved && reply) {
    return {
      ...outcome,
      state: {
        ...run.state,
        verification: {
          ...verification,
          passed: true,
          signedOff: { by: reply.from, reason: reply.reason ?? null },
        },
      },
      text: `${outcome.text}; signed off by ${reply.from}`,
    };
  }
  const state = recordToolOutcome(
    { ...run.state, verification: { ...verification, passed: false } },
    { toolName: TOOL.finish, summary: `${TOOL.finish}: not signed off`, ok: false, changedWorkspace: false },
  );
  if (!reply) {
    // Fails closed: a completion nobody signed off is not a completion.
    return { state, ok: false, text: why, finished: { status: 'blocked', reason: `not signed off: ${why}` } };
  }
  return {
    state,
    ok: false,
    text: `[the goal is not finished: ${reply.from} did not sign it off${reply.reason ? `: ${reply.reason}` : ''}] Go on working on the objective, then call finish again.`,
  };
}
