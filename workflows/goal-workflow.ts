/**
 * The goal workflow: drives the agent loop of one session until the goal finishes, a limit is
 * hit, or someone cancels it. The workflow function composes the run (goal-run.ts, the GoalRun port
 * of goal-run-port.ts that every gate and step uses) with its message path, declares its handlers and
 * runs the loop; the state and its rules live in GoalSession (core/goal-session.ts).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { withHolders } from '../core/agent-tasks';
import type { GoalSnapshot } from '../core/goal-snapshot';
import { taskView } from '../core/task-graph';
import { handBack, handsBackAtShare } from './agent-hand-back';
import { checkNextCall, reserve } from './budget-gate';
import { CommandQueue } from './command-queue';
import { settleDailyStep } from './daily-budget-gate';
import { GOAL_FAILED_TYPE, jobsQuery, stateQuery, tasksQuery } from './definitions';
import { goalFailureReason } from './failures';
import type { GoalControl } from './goal-control';
import { endCancelledGoal, endGoal } from './goal-ending';
import { afterCheckpoint } from './goal-hooks';
import { endingFailure, goalFailure } from './goal-outcome';
import { TemporalGoalRun } from './goal-run';
import type { GoalRun } from './goal-run-port';
import { startExecution } from './goal-start';
import { runStep } from './goal-step';
import type { GoalWorkflowInput } from './goal-workflow-input';
import { setupHandlers } from './handlers';
import { legacyControl } from './legacy/legacy-control';
import { PATCH } from './patches';
import { StallWatch } from './stall-watch';
import { tracedStep } from './step-trace';
import { TimeLimitReached } from './time-limit';
import { recordSnapshotRepository, snapshotAfterStep } from './workspace-snapshots';

export type { GoalWorkflowInput } from './goal-workflow-input';

/**
 * Continues the goal as new. A run of this build asks for AUTO_UPGRADE there: a goal pinned to the
 * build that started it (goalrun worker --versioning) moves to the deployment's current build at this
 * point, where no history needs replaying; unversioned workers and servers without versioning ignore it.
 */
function continueAsNewAt(run: TemporalGoalRun): Promise<never> {
  if (!run.features[PATCH.commandQueue]) return continueAsNew<typeof goalWorkflow>(run.continueAsNewInput());
  return makeContinueAsNewFunc<typeof goalWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(
    run.continueAsNewInput(),
  );
}

/**
 * Runs one goal. Returns the final snapshot; fails with GoalFailed when the goal failed and, from
 * patch goal-end-failure on, with GoalBlocked or GoalFailed (the snapshot in the details) when it
 * ended blocked or failed.
 */
export async function goalWorkflow(input: GoalWorkflowInput): Promise<GoalSnapshot> {
  const run = new TemporalGoalRun(input, { afterCheckpoint });
  const control = messagePath(run);
  let stall: StallWatch | null = null;
  setHandler(stateQuery, () => run.session.snapshot(run.workflowId));
  // Which agent holds which task shows beside it (issue 27 §2).
  setHandler(tasksQuery, () => withHolders(taskView(run.state.tasks), run.state.taskHolders));
  setHandler(jobsQuery, () => run.state.jobs);

  // Set when the loop ends: the goal's final snapshot (a blocked or failed goal's fails the run, below).
  let ended: GoalSnapshot;
  try {
    await startExecution(run, input);
    await recordSnapshotRepository(run);
    // The workflow marks a goal stalled itself (issue 24 item 6); goals of the command queue only.
    if (run.features[PATCH.stallWatch] && run.features[PATCH.commandQueue]) stall = new StallWatch(run);
    stall?.start();
    for (;;) {
      await control.atStepBoundary();
      if (control.clearRequested) {
        await control.clear();
        break;
      }
      const stop = run.session.stopDecision();
      // A sub-agent at its share hands back what it has and ends, never waits (issue 27 §2).
      if (stop?.status === 'limit_reached' && handsBackAtShare(run)) {
        await handBack(run, control, stop.reason);
        break;
      }
      if (stop?.status === 'limit_reached') {
        if (await control.waitAtLimit(stop)) continue;
        break;
      }
      if (stop) {
        await endGoal(run, stop.status, stop.reason);
        break;
      }
      // The money and token cap (issue 18): the next call's worst case must fit, or the goal waits.
      const budget = run.features[PATCH.commandQueue] ? checkNextCall(run.state) : null;
      if (budget?.stop && handsBackAtShare(run)) {
        await handBack(run, control, budget.stop.reason);
        break;
      }
      if (budget?.stop && control.waitAtBudget) {
        if (await control.waitAtBudget(budget.stop)) continue;
        break;
      }
      if (workflowInfo().continueAsNewSuggested) {
        if (await control.beforeContinueAsNew()) {
          return await continueAsNewAt(run);
        }
        continue;
      }
      // The store-wide daily budget (issue 18 item 4): reserved in the store for every worker at once.
      const daily =
        run.features[PATCH.dailyBudget] && control.reserveDaily ? await control.reserveDaily() : null;
      if (daily?.kind === 'again') continue;
      // The wait at the daily cap ended the goal (PATCH.waitsEnd): a call that can never fit, or no raise came.
      if (daily?.kind === 'ended') break;
      if (budget) reserve(run, budget.reservation);
      try {
        // Each step is a trace of its own (step-trace.ts); the span adds no command.
        const ended = await run.timeLimit.runStep(() => tracedStep(run, () => runStep(run, control)));
        if (!ended) await stall?.stepFinished();
        await snapshotAfterStep(run);
        run.publish();
        if (ended) {
          await endGoal(run, ended.status, ended.reason);
          break;
        }
      } catch (err) {
        if (!(err instanceof TimeLimitReached)) throw err;
        await run.answerUnanswered('the goal reached its time limit');
        await snapshotAfterStep(run);
      } finally {
        // Settled by the step's reported usage (or released: a call that did not happen costs nothing).
        if (budget) reserve(run, null);
        if (daily) await settleDailyStep(run, daily);
      }
    }
    stall?.stop();
    await control.beforeRunEnds();
    ended = run.session.snapshot(run.workflowId);
  } catch (err) {
    // continueAsNew works by throwing; it is how this run ends, not a failure.
    if (err instanceof ContinueAsNew) throw err;
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(async () => {
        await endCancelledGoal(run);
        await control.beforeRunEnds();
      });
      throw err;
    }
    // Anything but a known goal failure is a bug in this code: failing the workflow task (rather than
    // the goal) lets Temporal retry it, so a fixed build can carry the goal on.
    if (!isGoalFailure(err)) throw err;
    const reason = goalFailureReason(err);
    log.error('goal failed', { reason });
    await run.answerUnanswered('the goal failed');
    await endGoal(run, 'failed', reason);
    await control.beforeRunEnds();
    throw goalFailure(GOAL_FAILED_TYPE, run.session.snapshot(run.workflowId));
  }
  // Thrown outside the try: the catch above would take this failure for one that ends the goal.
  const failure = run.features[PATCH.goalEndFailure] ? endingFailure(ended) : null;
  if (failure) throw failure;
  return ended;
}

/**
 * How this run takes messages: the command queue, or, for a run started by a build before it, the
 * handlers it was started with (so its history replays).
 */
function messagePath(run: GoalRun): GoalControl {
  if (!run.features[PATCH.commandQueue]) return legacyControl(run);
  const queue = new CommandQueue(run);
  setupHandlers(run, queue);
  return queue;
}

/** Failures that end a goal: an activity that gave up (provider, tool host, store) or a deliberate failure. */
function isGoalFailure(err: unknown): boolean {
  return err instanceof ActivityFailure || err instanceof ApplicationFailure;
}
