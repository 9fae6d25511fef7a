/**
 * A workspace tool call of a step: run in the sandbox on the goal's tool queue (or its foreground
 * host), out of the sandbox once a human approved an escalation, or on the process that holds a
 * background job. A tool that cannot be run even after retries is an error result, not a failed goal.
 */
import { ActivityFailure, isCancellation } from '@temporalio/workflow';
import type { RunToolResult, ToolCallRef } from '../activities/types';
import { recordToolOutcome } from '../core/goal-rules';
import { appendLedger } from '../core/ledger';
import { DEFAULT_SANDBOX } from '../core/sandbox-settings';
import { storeKeys } from '../core/store-keys';
import { TOOL } from '../core/tool-names';
import { jobActivities, toolActivities } from './activities-proxy';
import { breakerAfterTool } from './breaker-gate';
import { askApproval } from './escalation-approval';
import { innermostMessage } from './failures';
import type { StepControl } from './goal-control';
import type { GoalRun } from './goal-run-port';
import { onGoalHost } from './host-placement';
import { answerToolCall } from './tool-answer';

/** Runs a workspace tool: in the sandbox, or out of it once a human approved; jobs go to their process. */
export async function runWorkspaceTool(
  run: GoalRun,
  call: ToolCallRef,
  stepNumber: number,
  control: StepControl,
): Promise<void> {
  const { goal } = run.state;
  const routing = call.routing;
  if (call.toolName === TOOL.jobKill && routing?.jobId === 'all') {
    await killAllJobsForModel(run, call);
    return;
  }
  let escalationApproved = false;
  if (routing?.escalation) {
    const decision = await askApproval(run, call, routing.escalation, control);
    if (!decision.approved) {
      await answerToolCall(run, call, decision.text, false);
      record(run, call, false, false);
      return;
    }
    escalationApproved = true;
  }
  const jobId = routing?.background ? run.session.nextJobId() : undefined;
  const job = routing?.jobId ? run.session.job(routing.jobId) : undefined;
  if (job && job.status === 'lost') {
    await answerToolCall(run, call, `${job.jobId} was lost: the tool host that ran it is gone`, false);
    record(run, call, false, false);
    return;
  }
  const input = {
    sessionId: goal.sessionId,
    stepNumber,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    workspace: goal.workspace,
    assistantKey: storeKeys.assistant(run.execution, stepNumber),
    sandbox: goal.sandbox ?? DEFAULT_SANDBOX,
    ...(escalationApproved ? { escalationApproved } : {}),
    ...(jobId ? { jobId } : {}),
    // Only in the input of goals that have rules: older goals send what they always sent.
    ...(goal.toolRules ? { toolRules: goal.toolRules } : {}),
  };
  run.state = { ...run.state, runningTool: call.summary };
  let result: RunToolResult;
  try {
    result = await control.serve(
      job
        ? jobActivities(call.summary, job.processQueue).runTool(input)
        : goal.toolTaskQueue
          ? toolActivities(call.summary, goal.toolTaskQueue).runTool(input)
          : onGoalHost(run, (placement) => toolActivities(call.summary, undefined, placement).runTool(input)),
    );
  } catch (err) {
    // A call cut short may have started something on the host.
    run.toolHostClean = false;
    // Cancellation (the goal, or its time limit) is not the tool's failure.
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    if (job) run.session.jobsEnded([job.jobId], 'lost');
    // A tool that could not run, even after retries, is a result the model can react to.
    const text = job
      ? `${job.jobId} could not be reached (its tool host is gone): ${innermostMessage(err)}`
      : `the tool could not be run: ${innermostMessage(err)}`;
    await answerToolCall(run, call, text, false);
    record(run, call, false, false);
    return;
  } finally {
    run.state = { ...run.state, runningTool: null };
  }
  run.toolHostClean &&= result.leftOnHost === false;
  run.unanswered = run.unanswered.filter((pending) => pending.toolCallId !== call.toolCallId);
  run.state = { ...run.state, ledger: appendLedger(run.state.ledger, result.entry) };
  if (result.job) run.session.jobStarted(result.job);
  if (result.killedJobs?.length) run.session.jobsEnded(result.killedJobs, 'killed');
  record(run, call, result.ok, result.changedWorkspace);
  breakerAfterTool(run, call, result);
}

/** Counts the call's outcome in the goal's progress rules. */
function record(run: GoalRun, call: ToolCallRef, ok: boolean, changedWorkspace: boolean): void {
  run.state = recordToolOutcome(run.state, {
    toolName: call.toolName,
    summary: call.summary,
    ok,
    changedWorkspace,
  });
}

/** `job-kill` with `all`: every running job, wherever it runs. */
async function killAllJobsForModel(run: GoalRun, call: ToolCallRef): Promise<void> {
  const before = run.state.jobs.filter((job) => job.status === 'running').map((job) => job.jobId);
  await run.killJobs();
  const lost = run.state.jobs.filter((job) => before.includes(job.jobId) && job.status === 'lost');
  const text =
    before.length === 0
      ? 'no background jobs are running'
      : `killed ${before.filter((id) => !lost.some((job) => job.jobId === id)).join(', ') || 'none'}${
          lost.length > 0 ? `; lost with their tool host: ${lost.map((job) => job.jobId).join(', ')}` : ''
        }`;
  await answerToolCall(run, call, text, true);
  record(run, call, true, false);
}
