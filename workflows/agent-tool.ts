/**
 * The `agent` tool in the workflow (issue 27 §2, patch sub-agents): each call of a step's run of
 * agent calls starts the goal workflow itself as a child workflow (so the Web UI links them and
 * visibility knows its ParentWorkflowId), with its own objective and a share of this goal's budget
 * (core/agents.ts); the calls of one step run at once, and the step waits for each durably (no
 * worker is held meanwhile) while the command queue keeps serving requests. A child's spend is
 * charged to this goal when it ends; cancelling this goal cancels its children (they run in its
 * cancellation scope, and the close policy asks Temporal to cancel them if it ends first).
 */
import {
  ActivityFailure,
  CancellationScope,
  ChildWorkflowCancellationType,
  type ChildWorkflowHandle,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  startChild,
} from '@temporalio/workflow';
import type { AgentWorktree } from '../activities/agent-worktree';
import type { ToolCallRef } from '../activities/types';
import type { AgentArgs } from '../core/agent-args';
import {
  type AgentLink,
  type AgentOutcome,
  type AgentRecord,
  agentResultText,
  agentSessionId,
  agentShare,
  agentSucceeded,
  childBreaker,
  childLimits,
  depthOf,
  endedAgent,
  runningAgents,
  startedAgent,
} from '../core/agents';
import { EVENT_KINDS } from '../core/event-kinds';
import type { GoalDefinition } from '../core/goal';
import { recordToolOutcome } from '../core/goal-rules';
import type { GoalSnapshot } from '../core/goal-snapshot';
import { spentOf } from '../core/spend-cap';
import { clipBytes, clipHead } from '../core/text';
import { TOOL } from '../core/tool-names';
import { GOAL_END_FAILURE_TYPES, GOAL_WORKFLOW_TYPE, workflowIdOf } from '../core/workflow-names';
import type { WorkflowToolArgs } from '../core/workflow-tool-args';
import { toolActivities } from './activities-proxy';
import {
  agentTasksSignal,
  GoalIterationKey,
  GoalModelKey,
  GoalSessionKey,
  GoalStatusKey,
  START_ITERATION,
  steerSignal,
} from './definitions';
import { failureDetail, innermostMessage } from './failures';
import type { StepControl } from './goal-control';
import type { GoalRun } from './goal-run-port';
import { answerToolCall } from './tool-answer';
import { onToolHost } from './workspace-context';

/** The Web UI's one-line summary is capped at 200 bytes. */
const STATIC_SUMMARY_MAX_BYTES = 200;

/** A child started by this step, waiting to be awaited at its call. */
interface StartedChild {
  call: ToolCallRef;
  record: AgentRecord;
  handle: ChildWorkflowHandle<(...args: unknown[]) => Promise<GoalSnapshot>>;
}

/**
 * Runs a step's consecutive agent calls: starts every child that may start (the others get a refusal
 * as their result), then waits for each in the order of the calls and stores its result.
 */
export async function runAgentCalls(run: GoalRun, calls: ToolCallRef[], control: StepControl): Promise<void> {
  const started: Array<StartedChild | null> = [];
  for (const call of calls) started.push(await startAgent(run, call));
  for (const child of started) {
    if (child) await awaitAgent(run, child, control);
  }
}

/** Starts one child, or answers its call with why it cannot start (null then). */
async function startAgent(run: GoalRun, call: ToolCallRef): Promise<StartedChild | null> {
  const parsed = call.args?.tool === TOOL.agent ? call.args.parsed : null;
  if (!parsed?.ok) {
    await refuse(
      run,
      call,
      parsed?.error ?? `${TOOL.agent}: the arguments of this call were not checked; send it again`,
    );
    return null;
  }
  const { goal } = run.state;
  const agents = run.state.agents ?? [];
  const share = agentShare(
    { limits: goal.limits, steps: run.state.steps, spent: spentOf(run.state), agents, depth: depthOf(goal) },
    parsed.args,
  );
  if (!share.ok) {
    await refuse(run, call, share.error);
    return null;
  }
  const n = agents.length + 1;
  const sessionId = agentSessionId(goal.sessionId, n);
  let workspace = goal.workspace;
  if (parsed.args.isolation === 'worktree') {
    const made = await worktreeFor(run, sessionId);
    if ('error' in made) {
      await refuse(run, call, `refused: isolation "worktree": ${made.error}`);
      return null;
    }
    workspace = made.worktree;
  }
  const workflowId = workflowIdOf(sessionId);
  const agentId = `agent-${n}`;
  const minutesLeft = run.session.remainingMs() / 60_000;
  const child = childGoal(goal, parsed.args, sessionId, {
    parentSessionId: goal.sessionId,
    parentWorkflowId: run.workflowId,
    agentId,
    depth: depthOf(goal) + 1,
  });
  child.limits = childLimits(goal.limits, share.share, minutesLeft);
  child.workspace = workspace;
  const record = startedAgent({
    agentId,
    sessionId,
    workflowId,
    toolCallId: call.toolCallId,
    objective: parsed.args.prompt,
    share: share.share,
  });
  // Recorded before the start: a replay that finds the child started finds its share held too.
  run.state = { ...run.state, agents: [...agents, record] };
  const handle = await startChild<(...args: unknown[]) => Promise<GoalSnapshot>>(GOAL_WORKFLOW_TYPE, {
    workflowId,
    args: [{ goal: child, ...(run.state.tasks.length > 0 ? { tasks: run.state.tasks } : {}) }],
    // Cancelling this goal cancels the child and waits for its cleanup (its transcript says so).
    cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    // If this goal ends some other way first (terminated, timed out), Temporal cancels the child.
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    staticSummary: clipBytes(`${agentId}: ${record.objective}`, STATIC_SUMMARY_MAX_BYTES),
    typedSearchAttributes: [
      { key: GoalStatusKey, value: 'running' },
      { key: GoalSessionKey, value: sessionId },
      { key: GoalModelKey, value: clipHead(child.model, 200) },
      { key: GoalIterationKey, value: START_ITERATION },
    ],
  });
  run.session.note(`${agentId} started: ${record.objective}`);
  await run.saveState(false, {
    kind: EVENT_KINDS.agent,
    data: { at: 'spawned', agent: agentId, sessionId, workflowId, share: share.share, notes: share.notes },
    key: `agent:${sessionId}:spawned`,
  });
  return { call, record, handle };
}

/** Waits for a child to end, charges its spend to this goal and stores its result for the model. */
async function awaitAgent(run: GoalRun, child: StartedChild, control: StepControl): Promise<void> {
  const outcome = await control.serve(outcomeOf(child.handle));
  const agents = endedAgent(run.state.agents ?? [], child.record.agentId, outcome);
  run.state = { ...run.state, agents };
  const ended = agents.find((agent) => agent.agentId === child.record.agentId)!;
  run.session.note(`${ended.agentId} ${ended.status} ($${ended.costUsd.toFixed(4)}, ${ended.steps} steps)`);
  const ok = agentSucceeded(ended.status);
  run.state = recordToolOutcome(run.state, {
    toolName: TOOL.agent,
    summary: `${TOOL.agent}: ${ended.agentId} ${ended.status}`,
    ok,
    changedWorkspace: ended.steps > 0,
  });
  await run.saveState(false, {
    kind: EVENT_KINDS.agent,
    data: {
      at: 'ended',
      agent: ended.agentId,
      sessionId: ended.sessionId,
      status: ended.status,
      costUsd: ended.costUsd,
      tokens: ended.tokens,
      steps: ended.steps,
    },
    key: `agent:${ended.sessionId}:ended`,
  });
  await answerToolCall(run, child.call, agentResultText(ended), ok);
}

/** What a child's run ended with: its final snapshot, or, when it failed without one, the failure. */
async function outcomeOf(handle: StartedChild['handle']): Promise<AgentOutcome> {
  try {
    return fromSnapshot(await handle.result());
  } catch (err) {
    // This goal's own cancellation goes on; a child cancelled by someone else is only its result.
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
    for (const type of GOAL_END_FAILURE_TYPES) {
      const snapshot = failureDetail(err, type) as GoalSnapshot | undefined;
      if (snapshot?.status) return fromSnapshot(snapshot);
    }
    if (isCancellation(err)) return { status: 'cancelled', summary: null, costUsd: 0, tokens: 0, steps: 0 };
    if (!(err instanceof Error)) throw err;
    return { status: 'failed', summary: innermostMessage(err), costUsd: 0, tokens: 0, steps: 0 };
  }
}

function fromSnapshot(snapshot: GoalSnapshot): AgentOutcome {
  return {
    status: snapshot.status,
    summary: snapshot.finishSummary ?? snapshot.reason,
    costUsd: snapshot.costUsd,
    tokens:
      snapshot.usage.totalTokens + (snapshot.agents ?? []).reduce((sum, agent) => sum + agent.tokens, 0),
    steps: snapshot.steps,
  };
}

/** The child's goal: the parent's model, sandbox and settings, its own objective, no transcript. */
export function childGoal(
  parent: GoalDefinition,
  args: AgentArgs,
  sessionId: string,
  agent: NonNullable<GoalDefinition['agent']>,
): GoalDefinition {
  // Not inherited: what is the parent's own (its name, result schema, foreground host, link), its
  // first message's images, its worktree (a clean of the child must never remove it), its checks (they
  // judge the whole objective, not the child's part) and its notifications (the parent tells people).
  const {
    name: _name,
    outputSchema: _schema,
    hostQueue: _host,
    agent: _parentsLink,
    images: _images,
    worktree: _worktree,
    verify: _verify,
    notifyTargets: _notify,
    ...inherited
  } = parent;
  const breaker = childBreaker(parent.breaker);
  return { ...inherited, sessionId, objective: args.prompt, agent, ...(breaker ? { breaker } : {}) };
}

/** Answers an agent call that starts no child. */
async function refuse(run: GoalRun, call: ToolCallRef, text: string): Promise<void> {
  run.state = recordToolOutcome(run.state, {
    toolName: TOOL.agent,
    summary: `${TOOL.agent}: refused`,
    ok: false,
    changedWorkspace: false,
  });
  await answerToolCall(run, call, text, false);
}

/**
 * A sub-agent's accepted todo-write goes to its parent, whose command queue applies it to the shared
 * graph (claims included). A parent that is gone is only a note: the child goes on.
 */
export async function tellParent(
  run: GoalRun,
  link: AgentLink,
  call: ToolCallRef,
  args: WorkflowToolArgs,
): Promise<void> {
  if (args.tool !== TOOL.todoWrite || !args.parsed.ok) return;
  const write = args.parsed.args;
  if (write.todos === undefined && write.delete.length === 0 && !write.clearCompleted) return;
  try {
    await getExternalWorkflowHandle(link.parentWorkflowId).signal(agentTasksSignal, {
      id: `${run.state.goal.sessionId}:${call.toolCallId}`,
      agentId: link.agentId,
      args: write,
    });
  } catch (err) {
    if (isCancellation(err)) throw err;
    run.session.note(`the parent did not take the task update: ${innermostMessage(err)}`);
  }
}

/**
 * Passes a /pause or /unpause on to the running children (issue 27 §2): each takes it as its own, so
 * it reaches their children too. A child that already ended is skipped; one that cannot be reached
 * is only a note.
 */
export async function tellChildren(
  run: GoalRun,
  text: '/pause' | '/unpause',
  requestId: string,
): Promise<void> {
  for (const agent of runningAgents(run.state.agents ?? [])) {
    try {
      await getExternalWorkflowHandle(agent.workflowId).signal(steerSignal, {
        id: `${requestId}:${agent.agentId}`,
        text,
        from: `parent ${run.state.goal.sessionId}`,
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      run.session.note(`${agent.agentId} did not take ${text}: ${innermostMessage(err)}`);
    }
  }
}

/** A git worktree of the workspace for a child, made on the goal's tool host; a failure is a refusal. */
async function worktreeFor(run: GoalRun, sessionId: string): Promise<AgentWorktree> {
  const { goal } = run.state;
  try {
    return await onToolHost(run, (placement) =>
      toolActivities('make a worktree for a sub-agent', goal.toolTaskQueue, placement).agentWorktree({
        workspace: goal.workspace,
        sessionId,
      }),
    );
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    return { error: innermostMessage(err) };
  }
}
