/**
 * Build B of the versioning test: goalrun's workflow with one change that no patch guards, a timer
 * before anything else. A history recorded by build A, replayed by this code, fails on its first
 * command; so goals pinned to A must never be handed to B except at a continue-as-new.
 */
import { sleep } from '@temporalio/workflow';
import { goalWorkflow as buildA, type GoalWorkflowInput } from '../../../workflows/goal-workflow';
import { BUILD_B_TIMER_MS } from './mark';

/** Build B's goal workflow: the same goal, after a timer build A never started. */
export async function goalWorkflow(input: GoalWorkflowInput): ReturnType<typeof buildA> {
  await sleep(BUILD_B_TIMER_MS);
  return buildA(input);
}
