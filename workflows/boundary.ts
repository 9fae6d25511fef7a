/**
 * What happens between two steps: steering is delivered, queued commands run, compaction is
 * checked, and a paused goal waits. Also the waits that end a run of steps: at a limit (until
 * /limits raises it), before continue-as-new (until every handler is done), and /clear.
 */
import {
  allHandlersFinished,
  condition,
  ParentClosePolicy,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { StopDecision } from '../core/goal-rules';
import { userText } from '../core/messages';
import { projectHashOf, sessionIdWith } from '../core/session-ids';
import { storeKeys } from '../core/store-keys';
import { ensureBudget } from './compaction';
import type { CompactionControl } from './compaction-control';
import { GoalIterationKey, GoalModelKey, GoalSessionKey, GoalStatusKey, workflowIdOf } from './definitions';
import type { GoalRun } from './goal-run';
import type { LoopRequests } from './steering';

/** How long a goal at a limit waits for /limits before it ends as limit_reached for good. */
export const LIMIT_WAIT_MS = 24 * 60 * 60_000;

/** The Web UI's one-line summary is capped at 200 bytes; a fresh session's is cut well below. */
const SUMMARY_MAX_CHARS = 150;

/** Runs everything due between steps; a paused goal waits here (holding no worker). */
export async function stepBoundary(
  run: GoalRun,
  control: CompactionControl,
  loop: LoopRequests,
): Promise<void> {
  for (;;) {
    await run.deliverPendingSteering();
    await writeNotes(run, loop);
    await ensureBudget(run.compactionHost());
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

async function enterPause(run: GoalRun): Promise<void> {
  run.session.setStatus('paused', 'paused by request');
  run.session.stopClock();
  run.timeLimit.disarm();
  run.session.note('paused');
  run.publish();
  await run.saveState(true, { kind: 'paused', data: { steps: run.state.steps } });
}

async function resumeFromPause(run: GoalRun): Promise<void> {
  run.session.setStatus('running');
  run.session.startClock();
  run.timeLimit.arm(run.session.remainingMs());
  run.publish();
  await run.saveState(true, { kind: 'unpaused', data: { steps: run.state.steps } });
}

/** Writes the notes queued by commands (a model switch) into the transcript. */
async function writeNotes(run: GoalRun, loop: LoopRequests): Promise<void> {
  while (loop.notes.length > 0) {
    const text = loop.notes.shift()!;
    const compaction = run.state.compaction;
    const n = (compaction?.notices ?? 0) + 1;
    if (compaction) run.state = { ...run.state, compaction: { ...compaction, notices: n } };
    const key = storeKeys.notice(run.execution, n);
    await run.appendMessage(key, userText(`[goalrun] ${text}`), {
      event: { kind: 'notice', data: { text }, key },
    });
  }
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
    await run.finish('limit_reached', stop.reason);
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
  const { goal } = run.state;
  const sessionId = sessionIdWith(projectHashOf(goal.sessionId), new Date(Date.now()));
  const fresh = { ...goal, sessionId, name: undefined };
  await startChild('goalWorkflow', {
    workflowId: workflowIdOf(sessionId),
    taskQueue: workflowInfo().taskQueue,
    args: [{ goal: fresh }],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    staticSummary: clipChars(goal.objective.replace(/\s+/g, ' '), SUMMARY_MAX_CHARS),
    typedSearchAttributes: [
      { key: GoalStatusKey, value: 'running' },
      { key: GoalSessionKey, value: sessionId },
      { key: GoalModelKey, value: goal.model.slice(0, 200) },
      { key: GoalIterationKey, value: 0 },
    ],
  });
  await run.finish('cleared', `cleared; the goal goes on in session ${sessionId}`);
  loop.clear.newSessionId = sessionId;
}

function clipChars(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
