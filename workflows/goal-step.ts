/**
 * One step of the goal loop: a model call and the tool calls it makes. Workflow tools (todo-write,
 * finish) change the state here; the model call is model-call.ts, a workspace tool workspace-tool.ts
 * (background jobs go to the process that holds them; an escalation out of the sandbox waits for a
 * human: escalation-approval.ts).
 */
import type { ModelStepResult } from '../activities/types';
import { addToBreakdown } from '../core/cost';
import { FailureType } from '../core/errors';
import type { GoalStatus } from '../core/goal';
import { continuationMessage } from '../core/goal-messages';
import { checkStopRules, endIteration } from '../core/goal-rules';
import { appendLedger, lastSeqOf } from '../core/ledger';
import { userText } from '../core/messages';
import type { ModelCard } from '../core/model-card';
import { spentOf } from '../core/spend-cap';
import { storeKeys } from '../core/store-keys';
import { isTodoWriteCall } from '../core/todo-write-tool';
import { TOOL } from '../core/tool-names';
import { addRequestUsage } from '../core/usage';
import {
  handleWorkflowTool,
  isWorkflowTool,
  planOnlyNudge,
  unvalidatedWorkflowToolArgs,
} from '../core/workflow-tools';
import { runAgentCalls, tellParent } from './agent-tool';
import { writeNotice } from './boundary';
import { breakerAfterTurn, breakerAfterWorkflowTool, takeBreakerWarning } from './breaker-gate';
import { afterAnswer, isOutage, switchToBackup } from './failover';
import { failureType } from './failures';
import type { StepControl } from './goal-control';
import { withStopHooks } from './goal-hooks';
import type { GoalRun } from './goal-run-port';
import { callModel, ModelCallInterrupted } from './model-call';
import { PATCH } from './patches';
import { waitForQuota } from './quota-wait';
import { answerToolCall, holdAnswerForEnd } from './tool-answer';
import { withVerification } from './verify-gate';
import { runWorkspaceTool } from './workspace-tool';

/** How a step ended the goal, if it did. */
export type StepEnd = { status: GoalStatus; reason: string | null } | null;

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
    const outage = isOutage(run, err);
    if (!(err instanceof ModelCallInterrupted) && !quota && !outage) throw err;
    // Nothing of the step is in the ledger yet: it simply has not happened.
    run.state = { ...run.state, steps: stepNumber - 1 };
    if (quota) return await waitForQuota(run, control, err, stepNumber);
    // The step runs again on the backup, after the next boundary resolved its budget (failover.ts).
    if (outage) {
      await switchToBackup(run, stepNumber, err);
      return null;
    }
    run.session.note(`step ${stepNumber} · model call stopped: the goal paused; it runs again on unpause`);
    return null;
  }
  const spentBefore = spentOf(run.state);
  recordModelStep(run, step, stepNumber, model, card);
  await afterAnswer(run, stepNumber);
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
  // Calls before this index were already run (a run of agent calls runs together).
  let ranUpTo = 0;
  const agents = run.features[PATCH.subAgents];
  for (const [index, call] of step.toolCalls.entries()) {
    if (index < ranUpTo) continue;
    if (finished) {
      await answerToolCall(run, call, 'not run: the goal was already finished by an earlier call', false);
      continue;
    }
    if (agents && call.toolName === TOOL.agent) {
      // The consecutive agent calls start together, so their children run at once (issue 27 §2).
      let end = index;
      while (end < step.toolCalls.length && step.toolCalls[end].toolName === TOOL.agent) end += 1;
      await runAgentCalls(run, step.toolCalls.slice(index, end), control);
      ranUpTo = end;
      continue;
    }
    if (isWorkflowTool(call.toolName)) {
      // Validated by the model step (zod belongs at the activity boundary, not in workflow code).
      const args = call.args ?? unvalidatedWorkflowToolArgs(call);
      // A sub-agent shares its parent's list: its writes are merged, and go to the parent (issue 27 §2).
      const child = agents ? run.state.goal.agent : undefined;
      const hooked = await withStopHooks(
        run,
        call,
        handleWorkflowTool(run.state, call, args, { subAgent: child !== undefined }),
      );
      const outcome = await withVerification(run, call, hooked, control, args);
      if (child && outcome.ok) await tellParent(run, child, call, args);
      run.state = outcome.state;
      breakerAfterWorkflowTool(run, call.toolName, args, outcome);
      handled.push({ toolName: call.toolName, ok: outcome.ok });
      let text = outcome.text;
      if (planOnly && index === step.toolCalls.length - 1) {
        const nudged = planOnlyNudge(run.state, handled);
        run.state = nudged.state;
        if (nudged.nudge) text = `${text}\n\n${nudged.nudge}`;
      }
      const last = index === step.toolCalls.length - 1;
      if (outcome.finished && last && run.features[PATCH.finishAnsweredAtEnd]) {
        // Stored with the goal-ended checkpoint: one local activity for both.
        holdAnswerForEnd(run, call, text, outcome.ok, isTodoWriteCall(call.toolName));
      } else {
        await answerToolCall(run, call, text, outcome.ok, isTodoWriteCall(call.toolName));
      }
      if (outcome.finished) finished = outcome.finished;
      continue;
    }
    await runWorkspaceTool(run, call, stepNumber, control);
  }
  const warning = takeBreakerWarning(run);
  if (warning && !finished) await writeNotice(run, warning);
  return finished;
}

/** Adds the model step's answer, usage and pressure figures to the state (priced as the model it called). */
export function recordModelStep(
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

/**
 * The model answered without a tool call: the turn is over. A goal that goes on gets a continuation
 * message, saved with a checkpoint (an iteration's end is a natural resume point).
 */
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
