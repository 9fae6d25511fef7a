/**
 * A tool call's escalation out of the sandbox. With `approval: never` it is denied at once; with
 * `on-request` the goal waits, holding no worker, until a human answers (`goalrun approve`/`deny`,
 * the answerApproval update) or the approval times out. The request and the decision are events.
 */
import type { ToolCallRef } from '../activities/types';
import { DEFAULT_SANDBOX } from '../core/sandbox-settings';
import { storeKeys } from '../core/store-keys';
import { plural } from '../core/text';
import type { ApprovalAnswer } from './definitions';
import type { StepControl } from './goal-control';
import type { GoalRun } from './goal-run-port';

/** Asks for the escalation; `text` is the denial the model is told (empty when approved). */
export async function askApproval(
  run: GoalRun,
  call: ToolCallRef,
  escalation: { command: string; justification: string; mcpServer?: string },
  control: StepControl,
): Promise<{ approved: boolean; text: string }> {
  const { approvals } = control;
  const sandbox = run.state.goal.sandbox ?? DEFAULT_SANDBOX;
  // An MCP server's own approval policy holds its calls for a human whatever sandbox.approval says.
  if (sandbox.approval === 'never' && !escalation.mcpServer) {
    await run.saveState(false, {
      kind: 'approval',
      data: { toolCallId: call.toolCallId, command: escalation.command, decision: 'denied', by: 'policy' },
      key: storeKeys.approvalEvent(call.toolCallId),
    });
    return {
      approved: false,
      text: 'denied: this goal does not allow commands outside the sandbox (sandbox.approval is "never"). Run the command inside the sandbox, or finish with status "blocked" and say what you need.',
    };
  }
  approvals.answer = null;
  run.session.requestApproval(
    { toolCallId: call.toolCallId, command: escalation.command, justification: escalation.justification },
    sandbox.approvalTimeoutMinutes,
  );
  run.session.stopClock();
  run.timeLimit.disarm();
  run.publish();
  await run.saveState(true, {
    kind: 'approval-requested',
    data: {
      toolCallId: call.toolCallId,
      command: escalation.command,
      justification: escalation.justification,
    },
    key: storeKeys.approvalRequestedEvent(call.toolCallId),
  });
  const answered = await control.waitInStep(
    () => approvals.answer !== null,
    sandbox.approvalTimeoutMinutes * 60_000,
  );
  const reply: ApprovalAnswer =
    answered && approvals.answer
      ? approvals.answer
      : {
          decision: 'deny',
          reason: `no answer within ${plural(sandbox.approvalTimeoutMinutes, 'minute')}`,
          from: 'timeout',
        };
  approvals.answer = null;
  const approved = reply.decision === 'approve';
  run.session.approvalAnswered(approved ? 'approved' : 'denied', reply.reason ?? '');
  run.session.startClock();
  run.timeLimit.arm(run.session.remainingMs());
  run.publish();
  await run.saveState(true, {
    kind: 'approval',
    data: {
      toolCallId: call.toolCallId,
      command: escalation.command,
      decision: approved ? 'approved' : 'denied',
      reason: reply.reason ?? null,
      by: reply.from,
    },
    key: storeKeys.approvalEvent(call.toolCallId),
  });
  return {
    approved,
    text: approved ? '' : `denied by ${reply.from}${reply.reason ? `: ${reply.reason}` : ''}`,
  };
}
