/**
 * The message path of goals started before the command queue (patch `command-queue`): their own
 * handlers, their own step boundary, and no serving during a step. Exactly the code those goals were
 * started with, so they replay; remove with the patch.
 */
import { condition } from '@temporalio/workflow';
import type { StopDecision } from '../../core/goal-rules';
import { compactionHostOf } from '../goal-compaction-host';
import type { ApprovalBox, GoalControl } from '../goal-control';
import type { GoalRun } from '../goal-run-port';
import { clearSession, drainForContinueAsNew, stepBoundary, waitAtLimit } from './boundary';
import { setupCompactionControl } from './compaction-control';
import { type LoopRequests, setupSteering } from './steering';

/** Registers the handlers of before 0.2.0 and returns the loop's view of them. */
export function legacyControl(run: GoalRun): GoalControl {
  const approvals: ApprovalBox = { answer: null };
  const loop: LoopRequests = { clear: { requested: false, newSessionId: null }, notes: [] };
  const control = setupCompactionControl(compactionHostOf(run));
  setupSteering(run, control, approvals, loop);
  return {
    atStepBoundary: () => stepBoundary(run, control, loop),
    get clearRequested() {
      return loop.clear.requested;
    },
    clear: () => clearSession(run, loop),
    waitAtLimit: (stop: StopDecision) => waitAtLimit(run, stop, loop),
    beforeContinueAsNew: () => drainForContinueAsNew(run, control, loop),
    beforeRunEnds: async () => {},
    serve: <T>(work: Promise<T>) => work,
    waitInStep: (ready: () => boolean, timeoutMs: number) => condition(ready, timeoutMs),
    approvals,
  };
}
