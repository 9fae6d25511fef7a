/**
 * A sub-agent at its share of its parent's budget (issue 27 §2, patch sub-agents): instead of waiting
 * for a raise as a top-level goal does, it gets one model turn with no tools to hand back what it has,
 * then ends budget_exhausted (never completed), that text as its summary. It never hangs: the turn is
 * one call, and a failed call ends it the same way with the failure as its summary.
 */
import { isCancellation } from '@temporalio/workflow';
import { FINISH_SUMMARY_MAX_CHARS } from '../core/limits';
import { userText } from '../core/messages';
import { KEY_PREFIX } from '../core/store-keys';
import { clip } from '../core/text';
import { innermostMessage } from './failures';
import type { StepControl } from './goal-control';
import { endGoal } from './goal-ending';
import type { GoalRun } from './goal-run-port';
import { recordModelStep } from './goal-step';
import { callModel } from './model-call';
import { PATCH } from './patches';
import { answerToolCall } from './tool-answer';

/** What the sub-agent is told before its last turn. */
export function handBackMessage(why: string): string {
  return [
    `[goalrun] Your share of the budget is used up (${why}). Tools are off now: this is your last answer.`,
    'Hand back what you have: what you did, what you found, what is left undone, and where things are.',
  ].join(' ');
}

/** Whether this run is a sub-agent that hands back at its share instead of waiting at a cap. */
export function handsBackAtShare(run: GoalRun): boolean {
  return run.features[PATCH.subAgents] && run.state.goal.agent !== undefined;
}

/** The hand-back turn, then the end: status budget_exhausted, the turn's text as the summary. */
export async function handBack(run: GoalRun, control: StepControl, why: string): Promise<void> {
  await run.appendMessage(
    `${KEY_PREFIX.continuation}hand-back@${run.execution}`,
    userText(handBackMessage(why)),
  );
  const stepNumber = run.state.steps + 1;
  run.state = { ...run.state, steps: stepNumber };
  const { model } = run.state.goal;
  const card = run.state.compaction?.card ?? null;
  let text: string;
  try {
    const step = await callModel(run, control, stepNumber, { handBack: true });
    recordModelStep(run, step, stepNumber, model, card);
    run.unanswered = [...step.toolCalls];
    // Offered none, a model may still send calls: each gets a result, none runs.
    for (const call of step.toolCalls) {
      await answerToolCall(run, call, 'not run: tools are off (the budget share is used up)', false);
    }
    text = step.text ?? step.textPreview;
  } catch (err) {
    if (isCancellation(err)) throw err;
    text = `(the hand-back turn failed: ${innermostMessage(err)})`;
  }
  run.state = { ...run.state, finishSummary: clip(text.trim() || '(no answer)', FINISH_SUMMARY_MAX_CHARS) };
  await endGoal(run, 'budget_exhausted', `budget share used up: ${why}`);
}
