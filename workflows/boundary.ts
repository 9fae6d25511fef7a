/**
 * The pieces of a step boundary both message paths share (the command queue, and the handlers of
 * goals started before it): entering and leaving a pause, a transcript notice, and the fresh
 * session a /clear starts.
 */
import { ParentClosePolicy, startChild, workflowInfo } from '@temporalio/workflow';
import { userText } from '../core/messages';
import { projectHashOf, sessionIdWith } from '../core/session-ids';
import { storeKeys } from '../core/store-keys';
import { clip, clipBytes, clipHead } from '../core/text';
import { escapeUiMarkdown } from '../core/ui-markdown';
import { breakerOnUnpause } from './breaker-gate';
import {
  GoalIterationKey,
  GoalModelKey,
  GoalSessionKey,
  GoalStatusKey,
  START_ITERATION,
  workflowIdOf,
} from './definitions';
import type { GoalRun } from './goal-run-port';

/** How long a goal at a limit waits for /limits before it ends as limit_reached for good. */
export const LIMIT_WAIT_MS = 24 * 60 * 60_000;

/** The Web UI's one-line summary is capped at 200 bytes; a fresh session's is cut well below. */
const SUMMARY_MAX_CHARS = 150;
/** Temporal's limit on a static summary. */
const STATIC_SUMMARY_MAX_BYTES = 200;

/** The goal stops at a step boundary: its clock and time limit stop, and a checkpoint is saved. */
export async function enterPause(run: GoalRun): Promise<void> {
  const tripped = run.state.breaker?.tripped;
  run.session.setStatus(
    'paused',
    run.state.pauseReason ?? (tripped ? `runaway breaker: ${tripped}` : 'paused by request'),
  );
  run.session.stopClock();
  run.timeLimit.disarm();
  run.session.note('paused');
  run.publish();
  await run.saveState(true, { kind: 'paused', data: { steps: run.state.steps } });
}

/** The goal goes on after a pause. */
export async function resumeFromPause(run: GoalRun): Promise<void> {
  run.session.setStatus('running');
  run.session.startClock();
  run.timeLimit.arm(run.session.remainingMs());
  run.publish();
  if (run.state.pauseReason) run.state = { ...run.state, pauseReason: null };
  await run.saveState(true, { kind: 'unpaused', data: { steps: run.state.steps } });
  // A pause of the runaway breaker: the model hears once why it was stopped.
  const note = breakerOnUnpause(run);
  if (note) await writeNotice(run, note);
}

/** Writes one notice into the transcript (and the event stream), numbered per session. */
export async function writeNotice(run: GoalRun, text: string): Promise<void> {
  const compaction = run.state.compaction;
  const n = (compaction?.notices ?? 0) + 1;
  if (compaction) run.state = { ...run.state, compaction: { ...compaction, notices: n } };
  const key = storeKeys.notice(run.execution, n);
  await run.appendMessage(key, userText(`[goalrun] ${text}`), {
    event: { kind: 'notice', data: { text }, key },
  });
}

/**
 * Starts the fresh session of a /clear (spec S-CLEAR) as its own workflow, on the same workspace
 * with the same objective; returns its session id. The caller ends this session as `cleared`.
 */
export async function startFreshSession(run: GoalRun): Promise<string> {
  const { goal } = run.state;
  const sessionId = sessionIdWith(projectHashOf(goal.sessionId), new Date(Date.now()));
  // The fresh session trusts what this one trusted, as pinned (issue 24 §3): not the files as they are now.
  const { trustedExecution: _pinnedHere, ...sources } = goal.extensions ?? {};
  const fresh = {
    ...goal,
    sessionId,
    name: undefined,
    extensions: { ...sources, pinnedFrom: goal.sessionId },
  };
  await startChild('goalWorkflow', {
    workflowId: workflowIdOf(sessionId),
    taskQueue: workflowInfo().taskQueue,
    args: [{ goal: fresh }],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    staticSummary: clipBytes(
      escapeUiMarkdown(clip(goal.objective.replace(/\s+/g, ' '), SUMMARY_MAX_CHARS)),
      STATIC_SUMMARY_MAX_BYTES,
    ),
    typedSearchAttributes: [
      { key: GoalStatusKey, value: 'running' },
      { key: GoalSessionKey, value: sessionId },
      { key: GoalModelKey, value: clipHead(goal.model, 200) },
      { key: GoalIterationKey, value: START_ITERATION },
    ],
  });
  return sessionId;
}
