/**
 * The goal workflow: drives the agent loop of one session until the goal finishes, a limit is
 * hit, or someone cancels it. Model steps and tool calls are activities; the control state
 * (counters, ledger, limits) lives here; message bodies live in the session store.
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  CancellationScope,
  ContinueAsNew,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { ModelStepResult, ToolCallRef } from '../activities/types';
import { initialCompactionState } from '../core/compaction/state';
import { contextEntries } from '../core/context-plan';
import { addToBreakdown } from '../core/cost';
import { FailureType } from '../core/errors';
import {
  checkStopRules,
  continuationMessage,
  endIteration,
  FINAL_STATUSES,
  type GoalDefinition,
  type GoalLimits,
  type GoalSnapshot,
  type GoalState,
  type GoalStatus,
  initialGoalState,
  keptProgressSummary,
  noteAction,
  recordToolOutcome,
  resumeMessage,
  snapshotOf,
} from '../core/goal';
import { appendLedger, lastSeqOf } from '../core/ledger';
import { ledgerEntryFor } from '../core/ledger-entry';
import { type StoredMessage, userText } from '../core/messages';
import { taskView } from '../core/task-graph';
import { isTodoWriteCall } from '../core/todo-write-tool';
import { GOAL_TOOL_NAMES } from '../core/tool-names';
import { addRequestUsage } from '../core/usage';
import { handleWorkflowTool, isWorkflowTool, planOnlyNudge } from '../core/workflow-tools';
import { modelActivities, storeActivities, toolActivities } from './activities-proxy';
import { type CompactionHost, compact, ensureBudget } from './compaction';
import { setupCompactionControl } from './compaction-control';
import { COMPACTION_PATCH, GOAL_FAILED_TYPE, stateQuery, tasksQuery } from './definitions';
import { failureType, goalFailureReason } from './failures';
import { createPublisher } from './visibility';

/** Input of the goal workflow. */
export interface GoalWorkflowInput {
  goal: GoalDefinition;
  /** Start from the session's saved checkpoint (a `goalrun resume` of a finished execution). */
  resume?: boolean;
  /** Limits that replace the saved ones on resume (e.g. a higher --max-iterations). */
  limitsOverride?: Partial<GoalLimits>;
  /** Control state carried over continue-as-new. */
  state?: GoalState;
  /** A user message delivered as the first message of a resumed execution (`resume --message`). */
  resumeMessage?: string;
}

/** Raised inside a step when the goal's time limit cancels it. */
class TimeLimitReached extends Error {}

/** Runs one goal. Returns the final snapshot; fails with GoalFailed when the goal failed. */
export async function goalWorkflow(input: GoalWorkflowInput): Promise<GoalSnapshot> {
  const executionStart = Date.now();
  const workflowId = workflowInfo().workflowId;
  // Goals started before compaction existed replay without it (their histories have no marker).
  const compactionOn = patched(COMPACTION_PATCH);
  let state: GoalState = input.state ?? initialGoalState(input.goal);
  /** Tool calls of the running step that have no stored result yet. */
  let unanswered: ToolCallRef[] = [];
  let keptProgress: string | null = null;

  const elapsedMs = () => state.elapsedMsBefore + (Date.now() - executionStart);
  const snapshot = (): GoalSnapshot => ({ ...snapshotOf(state, workflowId, elapsedMs()), keptProgress });
  setHandler(stateQuery, snapshot);
  setHandler(tasksQuery, () => taskView(state.tasks));

  const publish = createPublisher(() => ({ state, snapshot: snapshot() }), compactionOn);

  /** Saves the control state (without the ledger, which the transcript can rebuild). */
  const checkpoint = async (event?: { kind: string; data: unknown; key?: string }) => {
    const { ledger: _ledger, ...rest } = state;
    await storeActivities.saveCheckpoint({
      sessionId: state.goal.sessionId,
      state: { ...rest, elapsedMsBefore: elapsedMs() },
      tasks: state.tasks,
      keptProgress: keptProgress ?? undefined,
      event,
    });
  };

  const appendMessage = async (key: string, message: StoredMessage) => {
    const result = await storeActivities.appendMessage({ sessionId: state.goal.sessionId, key, message });
    // Results recorded before the activity returned its ledger entry carry only the seq.
    const entry = result.entry ?? ledgerEntryFor(result.seq, key, message);
    state = { ...state, ledger: appendLedger(state.ledger, entry) };
  };

  const answerUnanswered = async (why: string) => {
    for (const call of unanswered) {
      const text = `[not run to completion: ${why}]`;
      await appendMessage(`result:${call.toolCallId}`, {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            output: { type: 'error-text', value: text },
          },
        ],
      });
    }
    unanswered = [];
  };

  const finish = async (status: GoalStatus, reason: string | null) => {
    state = noteAction({ ...state, status, reason }, `goal ${status}${reason ? `: ${reason}` : ''}`);
    publish();
    await checkpoint({ kind: 'goal-ended', data: { status, reason }, key: `end:${state.executions}` });
  };

  const host: CompactionHost = {
    get: () => state,
    set: (next) => {
      state = next;
    },
    appendMessage,
  };
  const compactionControl = setupCompactionControl(host, compactionOn);

  try {
    if (input.state) {
      log.info('continued as new', { steps: state.steps, iteration: state.iteration });
    } else if (input.resume) {
      const saved = await storeActivities.loadCheckpoint(input.goal.sessionId);
      keptProgress = saved.keptProgress;
      const plan = saved.state.compaction?.plan;
      state = {
        ...saved.state,
        // The transcript holds every message; the ledger is what the context plan shows.
        ledger: plan
          ? contextEntries(saved.state.ledger, plan).sort((a, b) => a.seq - b.seq)
          : saved.state.ledger,
        goal: { ...saved.state.goal, limits: { ...saved.state.goal.limits, ...input.limitsOverride } },
        executions: saved.state.executions + 1,
        status: 'running',
        reason: null,
      };
      unanswered = saved.unansweredToolCalls.map((call) => ({ ...call, summary: call.toolName }));
      await answerUnanswered('the goal was interrupted while this tool was running');
      const text = resumeMessage(saved.state, keptProgress);
      await appendMessage(`resume:${state.executions}`, userText(text));
      keptProgress = null;
      state = noteAction(state, `resumed (execution ${state.executions})`);
    } else {
      const opened = await storeActivities.openSession({ goal: input.goal, workflowId });
      state = { ...state, ledger: appendLedger(state.ledger, opened.first) };
      if (compactionOn)
        state = { ...state, compaction: initialCompactionState(opened.first.seq, state.goal.autoCompact) };
    }
    if (compactionOn) await ensureBudget(host);
    publish();

    // The time limit is a durable timer: it fires even if the goal is stuck in one long step.
    let timeUp = false;
    let stepScope: CancellationScope | null = null;
    const remaining = Math.max(0, state.goal.limits.maxMinutes * 60_000 - elapsedMs());
    CancellationScope.cancellable(() => sleep(remaining, { summary: 'goal time limit' }))
      .then(() => {
        timeUp = true;
        stepScope?.cancel();
      })
      .catch(() => undefined);

    while (!FINAL_STATUSES.includes(state.status)) {
      const stop = checkStopRules(state, elapsedMs());
      if (stop) {
        await finish(stop.status, stop.reason);
        break;
      }
      if (workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        return await continueAsNew<typeof goalWorkflow>({
          goal: state.goal,
          state: { ...state, elapsedMsBefore: elapsedMs() },
        });
      }
      await compactionControl.beforeStep(state.steps + 1);
      const scope = new CancellationScope();
      stepScope = scope;
      try {
        await scope.run(() => runStep());
      } catch (err) {
        if (timeUp && isCancellation(err)) throw new TimeLimitReached();
        throw err;
      } finally {
        stepScope = null;
      }
      publish();
      await checkpoint();
    }
    return snapshot();
  } catch (err) {
    // continueAsNew works by throwing; it is how this run ends, not a failure.
    if (err instanceof ContinueAsNew) throw err;
    if (err instanceof TimeLimitReached) {
      await answerUnanswered('the goal reached its time limit');
      await finish('limit_reached', `time limit reached (${state.goal.limits.maxMinutes} minutes)`);
      return snapshot();
    }
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(async () => {
        await answerUnanswered('the goal was cancelled while this tool was running');
        keptProgress = keptProgressSummary(state, elapsedMs());
        await finish('cancelled', 'cancelled by request');
      });
      throw err;
    }
    const reason = goalFailureReason(err);
    log.error('goal failed', { reason });
    await answerUnanswered('the goal failed');
    await finish('failed', reason);
    throw ApplicationFailure.create({ message: reason, type: GOAL_FAILED_TYPE, nonRetryable: true });
  }

  /** One model call and the tool calls it makes. */
  async function runStep(): Promise<void> {
    const stepNumber = state.steps + 1;
    state = { ...state, steps: stepNumber };
    const { goal } = state;
    const callModel = () =>
      modelActivities(`model step ${stepNumber} · ${goal.model}`).modelStep({
        sessionId: goal.sessionId,
        stepNumber,
        model: goal.model,
        baseUrl: goal.baseUrl,
        upToSeq: lastSeqOf(state.ledger),
        plan: state.compaction?.plan,
        tools: GOAL_TOOL_NAMES,
      });
    let step: ModelStepResult;
    try {
      step = await callModel();
    } catch (err) {
      // A provider context overflow: one forced compaction, then the step is retried exactly once.
      if (!compactionOn || failureType(err) !== FailureType.ContextOverflow) throw err;
      state = noteAction(state, `step ${stepNumber} · the request overflowed the context window; compacting`);
      await compact(host, stepNumber, { forced: true, recovery: true });
      step = await callModel();
    }
    const coveredSeq = lastSeqOf(state.ledger);
    state = {
      ...state,
      usage: addRequestUsage(state.usage, step.usage),
      ledger: appendLedger(state.ledger, step.entry),
    };
    if (state.compaction) {
      const { card } = state.compaction;
      state = {
        ...state,
        breakdown: card
          ? addToBreakdown(state.breakdown ?? {}, goal.model, step.usage, { summarizer: false, card })
          : state.breakdown,
        compaction: {
          ...state.compaction,
          lastInputTokens: step.usage.inputTokens,
          lastCoveredSeq: coveredSeq,
          fixedTokens: step.fixedTokens ?? state.compaction.fixedTokens,
        },
      };
    }
    if (step.retried) {
      state = noteAction(
        state,
        `step ${stepNumber} · model call succeeded on attempt ${step.retried.attempts} after: ${step.retried.lastError}`,
      );
    }

    if (step.toolCalls.length === 0) {
      if (step.textPreview) state = noteAction(state, `step ${stepNumber} · said: ${step.textPreview}`);
      await endTurn();
      return;
    }

    unanswered = [...step.toolCalls];
    let finished: { status: GoalStatus; reason: string | null } | null = null;
    const planOnly = step.toolCalls.every((call) => isTodoWriteCall(call.toolName));
    const handled: Array<{ toolName: string; ok: boolean }> = [];
    for (const [index, call] of step.toolCalls.entries()) {
      if (finished) {
        await answerWorkflowTool(call, 'not run: the goal was already finished by an earlier call', false);
        continue;
      }
      if (isWorkflowTool(call.toolName)) {
        const outcome = handleWorkflowTool(state, call);
        state = outcome.state;
        handled.push({ toolName: call.toolName, ok: outcome.ok });
        let text = outcome.text;
        if (planOnly && index === step.toolCalls.length - 1) {
          const nudged = planOnlyNudge(state, handled);
          state = nudged.state;
          if (nudged.nudge) text = `${text}\n\n${nudged.nudge}`;
        }
        await answerWorkflowTool(call, text, outcome.ok);
        if (outcome.finished) finished = outcome.finished;
        continue;
      }
      const result = await toolActivities(call.summary, goal.toolTaskQueue).runTool({
        sessionId: goal.sessionId,
        stepNumber,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        workspace: goal.workspace,
      });
      unanswered = unanswered.filter((pending) => pending.toolCallId !== call.toolCallId);
      state = { ...state, ledger: appendLedger(state.ledger, result.entry) };
      state = recordToolOutcome(state, {
        toolName: call.toolName,
        summary: call.summary,
        ok: result.ok,
        changedWorkspace: result.changedWorkspace,
      });
    }
    if (finished) await finish(finished.status, finished.reason);
  }

  /** Stores the result of a tool handled inside the workflow. */
  async function answerWorkflowTool(call: ToolCallRef, text: string, ok: boolean): Promise<void> {
    await appendMessage(`result:${call.toolCallId}`, {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output: ok ? { type: 'text', value: text } : { type: 'error-text', value: text },
        },
      ],
    });
    unanswered = unanswered.filter((pending) => pending.toolCallId !== call.toolCallId);
  }

  /** The model answered without a tool call: the turn is over; go on with a continuation message. */
  async function endTurn(): Promise<void> {
    const changes = state.changes;
    state = endIteration(state);
    const stop = checkStopRules(state, elapsedMs());
    if (stop) {
      await finish(stop.status, stop.reason);
      return;
    }
    const text = continuationMessage(state, changes);
    await appendMessage(`continue:${state.iteration}`, userText(text));
  }
}
