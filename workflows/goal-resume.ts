/**
 * How a stopped session is resumed (`goalrun resume`): its saved state, brought up to date with the
 * transcript by the store, becomes this execution's; tool calls the stopped execution left without a
 * result are answered; the model is told it was resumed (and given the resume message, if any).
 */
import { EVENT_KINDS } from '../core/event-kinds';
import { resumeMessage } from '../core/goal-messages';
import { userText } from '../core/messages';
import { resumedState } from '../core/resumed-state';
import { storeKeys } from '../core/store-keys';
import { storeActivities } from './activities-proxy';
import { breakerOnResume } from './breaker-gate';
import type { GoalRun } from './goal-run-port';
import type { GoalWorkflowInput } from './goal-workflow-input';

/** Resumes a stopped session from its saved state, with the structured history carried over. */
export async function resumeSession(run: GoalRun, input: GoalWorkflowInput): Promise<void> {
  const prepared = await run.untilStored('prepareResume', () =>
    storeActivities.prepareResume(input.goal.sessionId),
  );
  run.opened = true;
  const saved = prepared.state;
  run.session.keptProgress = prepared.keptProgress;
  run.state = resumedState(saved, {
    execution: prepared.execution,
    limitsOverride: input.limitsOverride,
    hostQueue: input.goal.hostQueue,
    trustProject: input.trustProject,
  });
  breakerOnResume(run);
  if (prepared.stepsRecovered > 0) {
    run.session.note(`recovered ${prepared.stepsRecovered} step(s) the stopped execution did not save`);
  }
  run.unanswered = prepared.unansweredToolCalls.map((call) => ({ ...call, summary: call.toolName }));
  await run.answerUnanswered('the goal was interrupted while this tool was running');
  const text = resumeMessage({ ...saved, executions: prepared.execution }, prepared.keptProgress);
  const { goal } = run.state;
  await run.appendMessage(
    storeKeys.resume(run.execution),
    userText(text),
    {
      event: {
        kind: EVENT_KINDS.sessionResumed,
        data: {
          workflowId: run.workflowId,
          model: goal.model,
          workspace: goal.workspace,
          objective: goal.objective,
          limits: goal.limits,
          execution: run.execution,
        },
        key: storeKeys.sessionResumedEvent(run.execution),
      },
    },
    true,
  );
  if (input.resumeMessage) {
    await run.deliverSteering({
      id: storeKeys.resumeSteeringId(run.execution),
      text: input.resumeMessage,
      from: 'resume',
    });
  }
  run.session.keptProgress = null;
  run.session.note(`resumed (execution ${run.execution})`);
}
