/**
 * How an execution of a goal starts: a new session (its workspace context gathered, then opened), a
 * resumed one (goal-resume.ts), or a continuation after continue-as-new (nothing to do but go on).
 * Then its time limit is armed for the time left and the Web UI is told.
 */
import { log } from '@temporalio/workflow';
import { openNewSession } from './goal-open';
import { resumeSession } from './goal-resume';
import type { GoalRun } from './goal-run-port';
import type { GoalWorkflowInput } from './goal-workflow-input';
import { gatherWorkspaceContext } from './workspace-context';

/** Starts the execution: a new session, a resumed one, or a continuation after continue-as-new. */
export async function startExecution(run: GoalRun, input: GoalWorkflowInput): Promise<void> {
  if (input.state) {
    log.info('continued as new', { steps: run.state.steps, iteration: run.state.iteration });
  } else if (input.resume) {
    await resumeSession(run, input);
    await gatherWorkspaceContext(run);
  } else {
    await gatherWorkspaceContext(run);
    await openNewSession(run);
  }
  run.timeLimit.arm(run.session.remainingMs());
  run.publish();
}
