/**
 * The model call of a step: one `modelStep` activity (on the goal's host when it has one), with one
 * forced compaction and one retry when the request overflows the window. A /pause while it runs
 * stops it (goals of the command queue): the call is cancelled, and the step runs again on unpause,
 * so a paused goal makes no model call at all.
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { ModelStepResult } from '../activities/types';
import { depthOf, mayStartAgents } from '../core/agents';
import { FailureType } from '../core/errors';
import { lastSeqOf } from '../core/ledger';
import { modelStepAttempts } from '../core/model-attempts';
import { GOAL_TOOL_NAMES, GOAL_TOOL_NAMES_0_1, GOAL_TOOL_NAMES_WITH_AGENT } from '../core/tool-names';
import { modelActivities } from './activities-proxy';
import { compact } from './compaction';
import { stepFailover } from './failover';
import { failureType } from './failures';
import { compactionHostOf } from './goal-compaction-host';
import type { StepControl } from './goal-control';
import type { GoalRun } from './goal-run-port';
import { onGoalHost, type Placement } from './host-placement';
import { countingBilled, countLostStep, stepPricing } from './paid-calls';
import { PATCH } from './patches';

/** A model call stopped because the goal paused: the step is not taken and runs again on unpause. */
export class ModelCallInterrupted extends Error {
  constructor() {
    super('the model call was stopped: the goal paused');
    this.name = 'ModelCallInterrupted';
  }
}

/** Calls the model for step `stepNumber`; throws ModelCallInterrupted when a /pause stopped the call. */
export async function callModel(
  run: GoalRun,
  control: StepControl,
  stepNumber: number,
  options: { handBack?: boolean } = {},
): Promise<ModelStepResult> {
  const attempt = async () => {
    const { goal } = run.state;
    // Priced as the step counts its answer: the model and card it started with (goal-step.ts).
    const pricing = stepPricing(run);
    const priced = { model: goal.model, card: run.state.compaction?.card ?? null, pricing };
    const failover = stepFailover(run);
    // The state saved with the answer accounts for the messages before it, so it does not count this
    // step yet: a resume counts the answers stored after it (see prepareResume).
    const state = run.stateWrite(false, { steps: stepNumber - 1 });
    const input = {
      sessionId: goal.sessionId,
      stepNumber,
      execution: run.execution,
      model: goal.model,
      baseUrl: goal.baseUrl,
      ...(goal.apiKeyEnv ? { apiKeyEnv: goal.apiKeyEnv } : {}),
      upToSeq: lastSeqOf(run.state.ledger),
      plan: run.state.compaction?.plan,
      // A sub-agent's hand-back turn is offered no tools (agent-hand-back.ts).
      tools: options.handBack ? [] : toolsOf(run),
      ...(options.handBack ? { handBack: true } : {}),
      state,
      providerUnreachableMinutes: goal.providerUnreachableMinutes,
      ...(run.features[PATCH.commandQueue] ? { waitsOutQuota: true } : {}),
      ...(goal.streamIdleTimeoutS ? { streamIdleTimeoutS: goal.streamIdleTimeoutS } : {}),
      pricing,
      // Where the step gives up on its model for the goal's backup (failover.ts).
      ...(failover ? { failover } : {}),
    };
    const proxy = (placement: Placement) =>
      modelActivities(`model step ${stepNumber} · ${goal.model}`, modelStepAttempts(goal), placement);
    let result: ModelStepResult;
    if (run.features[PATCH.commandQueue]) {
      const call = new CancellationScope();
      let paused = false;
      try {
        result = await control.serve(
          call.run(() =>
            // A step that gave up on a store outage (StoreUnavailable) is taken again once the store is back.
            run.untilStored(
              'modelStep',
              () =>
                countingBilled(run, priced, () =>
                  onGoalHost(
                    run,
                    (placement) => proxy(placement).modelStep(input),
                    (lost) => countLostStep(run, priced, lost),
                  ),
                ),
              { timeoutIsOutage: false },
            ),
          ),
          {
            when: () => run.state.paused,
            act: () => {
              paused = true;
              call.cancel();
            },
          },
        );
      } catch (err) {
        if (paused && isCancellation(err)) throw new ModelCallInterrupted();
        throw err;
      }
    } else {
      result = await countingBilled(run, priced, () => proxy({}).modelStep(input));
    }
    run.stateWritten(state);
    return result;
  };
  try {
    return await attempt();
  } catch (err) {
    if (failureType(err) !== FailureType.ContextOverflow) throw err;
    run.session.note(`step ${stepNumber} · the request overflowed the context window; compacting`);
    await compact(compactionHostOf(run), stepNumber, { forced: true, recovery: true });
    return attempt();
  }
}

/**
 * The tools the model is offered: a goal of 0.1.0 keeps the list its history recorded (memory-search
 * came with the command queue's release); the agent tool comes with patch sub-agents, to goals not
 * yet at the depth limit (issue 27 §2).
 */
function toolsOf(run: GoalRun): string[] {
  if (!run.features[PATCH.commandQueue]) return GOAL_TOOL_NAMES_0_1;
  if (run.features[PATCH.subAgents] && mayStartAgents(depthOf(run.state.goal)))
    return GOAL_TOOL_NAMES_WITH_AGENT;
  return GOAL_TOOL_NAMES;
}
