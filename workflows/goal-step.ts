/**
 * One step of the goal loop: a model call and the tool calls it makes. Workflow tools (todo-write,
 * finish) change the state here; workspace tools run as activities on the tool host; background
 * jobs are routed to the process that holds them; an escalation out of the sandbox waits for a human.
 */
import { ActivityFailure, CancellationScope, isCancellation } from '@temporalio/workflow';
import type { ModelStepResult, RunToolResult, ToolCallRef } from '../activities/types';
import { addToBreakdown } from '../core/cost';
import { FailureType } from '../core/errors';
import { EVENT_KINDS } from '../core/event-kinds';
import type { GoalStatus } from '../core/goal';
import { continuationMessage } from '../core/goal-messages';
import { checkStopRules, endIteration, recordToolOutcome } from '../core/goal-rules';
import { appendLedger, lastSeqOf } from '../core/ledger';
import { DEFAULT_PROVIDER_UNREACHABLE_MINUTES, MODEL_STEP_MAX_ATTEMPTS } from '../core/limits';
import { userText } from '../core/messages';
import type { ModelCard } from '../core/model-card';
import { DEFAULT_SANDBOX } from '../core/sandbox-settings';
import { spentOf } from '../core/spend-cap';
import { storeKeys } from '../core/store-keys';
import { taskView } from '../core/task-graph';
import { plural } from '../core/text';
import { isTodoWriteCall } from '../core/todo-write-tool';
import { GOAL_TOOL_NAMES, GOAL_TOOL_NAMES_0_1, TOOL } from '../core/tool-names';
import { addRequestUsage } from '../core/usage';
import {
  handleWorkflowTool,
  isWorkflowTool,
  planOnlyNudge,
  unvalidatedWorkflowToolArgs,
} from '../core/workflow-tools';
import { jobActivities, modelActivities, toolActivities } from './activities-proxy';
import { breakerAfterTool, breakerAfterTurn } from './breaker-gate';
import { compact } from './compaction';
import type { ApprovalAnswer } from './definitions';
import { failureType, innermostMessage } from './failures';
import type { StepControl } from './goal-control';
import { withStopHooks } from './goal-hooks';
import type { GoalRun } from './goal-run';
import { onGoalHost, type Placement } from './host-placement';
import { PATCH } from './patches';
import { waitForQuota } from './quota-wait';

/** How a step ended the goal, if it did. */
export type StepEnd = { status: GoalStatus; reason: string | null } | null;

/** A model call stopped because the goal paused: the step is not taken and runs again on unpause. */
class ModelCallInterrupted extends Error {
  constructor() {
    super('the model call was stopped: the goal paused');
    this.name = 'ModelCallInterrupted';
  }
}

/** Runs one step. Returns how the goal ended when a `finish` call ended it. */
export async function runStep(run: GoalRun, control: StepControl): Promise<StepEnd> {
  const stepNumber = run.state.steps + 1;
  run.state = { ...run.state, steps: stepNumber };
  // What the call is priced and counted as: a /model served while it runs applies from the next step.
  const { model } = run.state.goal;
  const card = run.state.compaction?.card ?? null;
  let step: ModelStepResult;
  try {
    step = await callModel(run, control, stepNumber);
  } catch (err) {
    const quota = run.features[PATCH.commandQueue] && failureType(err) === FailureType.QuotaExhausted;
    if (!(err instanceof ModelCallInterrupted) && !quota) throw err;
    // Nothing of the step is in the ledger yet: it simply has not happened.
    run.state = { ...run.state, steps: stepNumber - 1 };
    if (quota) await waitForQuota(run, control, err, stepNumber);
    else
      run.session.note(`step ${stepNumber} · model call stopped: the goal paused; it runs again on unpause`);
    return null;
  }
  const spentBefore = spentOf(run.state);
  recordModelStep(run, step, stepNumber, model, card);
  const spentAfter = spentOf(run.state);
  breakerAfterTurn(run, step.toolCalls.length, {
    costUsd: spentAfter.costUsd - spentBefore.costUsd,
    tokens: spentAfter.tokens - spentBefore.tokens,
  });

  if (step.toolCalls.length === 0) {
    if (step.textPreview) run.session.note(`step ${stepNumber} · said: ${step.textPreview}`);
    await endTurn(run);
    return null;
  }

  run.unanswered = [...step.toolCalls];
  let finished: StepEnd = null;
  const planOnly = step.toolCalls.every((call) => isTodoWriteCall(call.toolName));
  const handled: Array<{ toolName: string; ok: boolean }> = [];
  for (const [index, call] of step.toolCalls.entries()) {
    if (finished) {
      await answer(run, call, 'not run: the goal was already finished by an earlier call', false);
      continue;
    }
    if (isWorkflowTool(call.toolName)) {
      // Validated by the model step (zod belongs at the activity boundary, not in workflow code).
      const args = call.args ?? unvalidatedWorkflowToolArgs(call);
      const outcome = await withStopHooks(run, call, handleWorkflowTool(run.state, call, args));
      run.state = outcome.state;
      handled.push({ toolName: call.toolName, ok: outcome.ok });
      let text = outcome.text;
      if (planOnly && index === step.toolCalls.length - 1) {
        const nudged = planOnlyNudge(run.state, handled);
        run.state = nudged.state;
        if (nudged.nudge) text = `${text}\n\n${nudged.nudge}`;
      }
      await answer(run, call, text, outcome.ok, isTodoWriteCall(call.toolName));
      if (outcome.finished) finished = outcome.finished;
      continue;
    }
    await runWorkspaceTool(run, call, stepNumber, control);
  }
  return finished;
}

/**
 * The model call, with one forced compaction and one retry when the request overflows the window.
 * A /pause while it runs stops it (goals of the command queue): the call is cancelled, and the step
 * runs again on unpause, so a paused goal makes no model call at all.
 */
async function callModel(run: GoalRun, control: StepControl, stepNumber: number): Promise<ModelStepResult> {
  const attempt = async () => {
    const { goal } = run.state;
    // The state saved with the answer accounts for the messages before it, so it does not count this
    // step yet: a resume counts the answers stored after it (see prepareResume).
    const state = run.stateWrite(false, { steps: stepNumber - 1 });
    const input = {
      sessionId: goal.sessionId,
      stepNumber,
      execution: run.execution,
      model: goal.model,
      baseUrl: goal.baseUrl,
      upToSeq: lastSeqOf(run.state.ledger),
      plan: run.state.compaction?.plan,
      // A goal of 0.1.0 keeps the tool list its history recorded; memory-search came with the command queue's release.
      tools: run.features[PATCH.commandQueue] ? GOAL_TOOL_NAMES : GOAL_TOOL_NAMES_0_1,
      state,
      providerUnreachableMinutes: goal.providerUnreachableMinutes,
      ...(run.features[PATCH.commandQueue] ? { waitsOutQuota: true } : {}),
      ...(goal.streamIdleTimeoutS ? { streamIdleTimeoutS: goal.streamIdleTimeoutS } : {}),
    };
    const proxy = (placement: Placement) =>
      modelActivities(`model step ${stepNumber} · ${goal.model}`, modelAttempts(goal), placement);
    let result: ModelStepResult;
    if (run.features[PATCH.commandQueue]) {
      const call = new CancellationScope();
      let paused = false;
      try {
        result = await control.serve(
          call.run(() => onGoalHost(run, (placement) => proxy(placement).modelStep(input))),
          {
            when: () => run.state.paused,
            act: () => {
              paused = true;
              call.cancel();
            },
          },
        );
      } catch (err) {
        if (paused && isCancellation(err)) throw new ModelCallInterrupted();
        throw err;
      }
    } else {
      result = await proxy({}).modelStep(input);
    }
    run.stateWritten(state);
    return result;
  };
  try {
    return await attempt();
  } catch (err) {
    if (failureType(err) !== FailureType.ContextOverflow) throw err;
    run.session.note(`step ${stepNumber} · the request overflowed the context window; compacting`);
    await compact(run.compactionHost(), stepNumber, { forced: true, recovery: true });
    return attempt();
  }
}

/**
 * Attempts of a model step: enough for retries to cover provider_unreachable_minutes with the
 * backoff of the model activities (1 s doubling to 60 s), so the unreachable rule decides, not the count.
 */
function modelAttempts(goal: { providerUnreachableMinutes?: number }): number {
  const minutes = goal.providerUnreachableMinutes ?? DEFAULT_PROVIDER_UNREACHABLE_MINUTES;
  // 1+2+4+8+16+32 s come first, then one attempt a minute.
  return Math.max(MODEL_STEP_MAX_ATTEMPTS, 7 + Math.ceil(minutes) + 1);
}

/** Adds the model step's answer, usage and pressure figures to the state (priced as the model it called). */
function recordModelStep(
  run: GoalRun,
  step: ModelStepResult,
  stepNumber: number,
  model: string,
  calledCard: ModelCard | null,
): void {
  const coveredSeq = lastSeqOf(run.state.ledger);
  run.state = {
    ...run.state,
    usage: addRequestUsage(run.state.usage, step.usage),
    ledger: appendLedger(run.state.ledger, step.entry),
    // The reported usage settles the call's reservation (goals with a cap only hold one).
    ...(run.state.budgetReserved ? { budgetReserved: null } : {}),
  };
  const compaction = run.state.compaction;
  if (compaction) {
    const card = calledCard ?? compaction.card;
    run.state = {
      ...run.state,
      breakdown: card
        ? addToBreakdown(run.state.breakdown ?? {}, model, step.usage, { summarizer: false, card })
        : run.state.breakdown,
      compaction: {
        ...compaction,
        lastInputTokens: step.usage.inputTokens,
        lastCoveredSeq: coveredSeq,
        fixedTokens: step.fixedTokens ?? compaction.fixedTokens,
      },
    };
  }
  if (step.retried) {
    run.session.note(
      `step ${stepNumber} · model call succeeded on attempt ${step.retried.attempts} after: ${step.retried.lastError}`,
    );
  }
}

/** Runs a workspace tool: in the sandbox, or out of it once a human approved; jobs go to their process. */
async function runWorkspaceTool(
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
      await answer(run, call, decision.text, false);
      record(run, call, false, false);
      return;
    }
    escalationApproved = true;
  }
  const jobId = routing?.background ? run.session.nextJobId() : undefined;
  const job = routing?.jobId ? run.session.job(routing.jobId) : undefined;
  if (job && job.status === 'lost') {
    await answer(run, call, `${job.jobId} was lost: the tool host that ran it is gone`, false);
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
    // Cancellation (the goal, or its time limit) is not the tool's failure.
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    if (job) run.session.jobsEnded([job.jobId], 'lost');
    // A tool that could not run, even after retries, is a result the model can react to.
    const text = job
      ? `${job.jobId} could not be reached (its tool host is gone): ${innermostMessage(err)}`
      : `the tool could not be run: ${innermostMessage(err)}`;
    await answer(run, call, text, false);
    record(run, call, false, false);
    return;
  } finally {
    run.state = { ...run.state, runningTool: null };
  }
  run.unanswered = run.unanswered.filter((pending) => pending.toolCallId !== call.toolCallId);
  run.state = { ...run.state, ledger: appendLedger(run.state.ledger, result.entry) };
  if (result.job) run.session.jobStarted(result.job);
  if (result.killedJobs?.length) run.session.jobsEnded(result.killedJobs, 'killed');
  record(run, call, result.ok, result.changedWorkspace);
  breakerAfterTool(run, call, result);
}

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
  await answer(run, call, text, true);
  record(run, call, true, false);
}

/**
 * An escalation out of the sandbox. With `approval: never` it is denied at once; with `on-request`
 * the goal waits, holding no worker, until a human answers or the approval times out.
 */
async function askApproval(
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

/**
 * Stores the result of a call the workflow answers itself, with its event for the stream (and the
 * task list when the call changed it).
 */
async function answer(
  run: GoalRun,
  call: ToolCallRef,
  text: string,
  ok: boolean,
  tasksChanged = false,
): Promise<void> {
  const key = storeKeys.toolResult(call.toolCallId);
  const toolEvent = {
    kind: EVENT_KINDS.tool,
    data: {
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      ok,
      bytes: utf8Bytes(text),
      head: text.slice(0, 2048),
    },
    key: storeKeys.toolEvent(call.toolCallId),
  };
  const events = tasksChanged
    ? [
        toolEvent,
        {
          kind: EVENT_KINDS.taskUpdate,
          data: { tasks: taskView(run.state.tasks) },
          key: storeKeys.taskUpdateEvent(call.toolCallId),
        },
      ]
    : toolEvent;
  await run.appendMessage(
    key,
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output: ok ? { type: 'text', value: text } : { type: 'error-text', value: text },
        },
      ],
    },
    { event: events },
  );
  run.unanswered = run.unanswered.filter((pending) => pending.toolCallId !== call.toolCallId);
}

/**
 * The model answered without a tool call: the turn is over. A goal that goes on gets a continuation
 * message, saved with a checkpoint (an iteration's end is a natural resume point).
 */
function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}

async function endTurn(run: GoalRun): Promise<void> {
  const changes = run.state.changes;
  run.state = endIteration(run.state);
  const stop = checkStopRules(run.state, run.session.elapsedMs());
  // A blocked goal is over; one at a limit may be raised and go on, and then needs the message.
  if (stop?.status === 'blocked') return;
  await run.appendMessage(
    storeKeys.continuation(run.execution, run.state.iteration),
    userText(continuationMessage(run.state, changes)),
    {},
    true,
  );
}
