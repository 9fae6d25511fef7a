/**
 * The model-step activity: builds the context from the store and the plan, streams the
 * answer, and stores it once under the step's key, so a retry after a crash calls no model twice.
 * What it returns for a stored answer is model-step-result.ts; its clients are model-clients.ts.
 */

import { Context, log } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { AGENT_SUMMARY_CHARS } from '../core/agents';
import { FailureType } from '../core/errors';
import { EVENT_KINDS } from '../core/event-kinds';
import type { GoalDefinition } from '../core/goal';
import { MODEL_HEARTBEAT_INTERVAL_MS, PROGRESS_SAVE_INTERVAL_MS } from '../core/limits';
import { activityInstance, type BilledAttempts, paidCallKeys } from '../core/paid-calls';
import { storeKeys } from '../core/store-keys';
import { TokenCountCache } from '../core/token-cache';
import { latestContext } from './extensions/extension-activities';
import { carriedFailureRun, failoverHeartbeat, withFailover } from './failover-count';
import { pacedHeartbeat } from './heartbeat-pacer';
import { KeptAnswers } from './kept-answers';
import { modelClientCache } from './model-clients';
import { buildStepRequest } from './model-request';
import { storeModelAnswer } from './model-step-answer';
import { modelStepResult } from './model-step-result';
import { AttemptMeter } from './paid-attempts';
import { isUnreachableError } from './providers/errors';
import { idleTimeoutMsOf } from './providers/stream-idle';
import type { ModelResponse } from './providers/types';
import {
  type ModelStepHeartbeat,
  modelStepFailure,
  nextUnreachableSince,
  unreachableSinceOf,
} from './providers/unreachable';
import { type OutageContext, untilStored } from './store-outage';
import { StreamDeltaWriter } from './stream-delta-writer';
import { recordTraceContent } from './trace-content';
import type { ModelStepInput, ModelStepResult } from './types';
import type { ActivityDeps } from './workflow-activities';

/** Creates the model-step activity; `kept` holds answers the store did not take yet (one per worker). */
export function createModelStepActivity(deps: ActivityDeps, kept = new KeptAnswers()) {
  const { store } = deps;
  const clientFor = modelClientCache(deps);
  // The system prompt and the tools' JSON: the same text step after step, estimated once.
  const fixedTexts = new TokenCountCache();

  return {
    /** One model call: builds the context from the store, streams the answer, stores it once. */
    async modelStep(input: ModelStepInput): Promise<ModelStepResult> {
      const execution = input.execution ?? 1;
      const assistantKey = storeKeys.assistant(execution, input.stepNumber);
      const context = Context.current();
      const { info } = context;
      const instance = activityInstance(info.workflowExecution?.runId ?? 'standalone', info.activityId);
      const attemptKey = paidCallKeys.attempt(instance, info.attempt);
      // What this attempt and the unrecorded ones before it were billed (paid-attempts.ts).
      const meter = new AttemptMeter({
        store,
        sessionId: input.sessionId,
        model: input.model,
        instance,
        attempt: info.attempt,
        pricing: input.pricing,
        previous: info.heartbeatDetails,
      });
      // One round trip, on every step's path; the step is announced before the model is called, once
      // (store/step-opening.ts). `watched`: someone prints its partial messages as they stream in.
      const [{ stored, session, watched }, workspaceContext] = await Promise.all([
        store.openStep(input.sessionId, assistantKey, {
          kind: EVENT_KINDS.stepStart,
          data: { step: input.stepNumber, model: input.model, execution },
          key: storeKeys.stepStartEvent(execution, input.stepNumber),
        }),
        // Only a named execution: runs that name none read the newest row each time.
        latestContext(store, input.sessionId, input.execution),
      ]);
      const goal = goalOf(input.state?.set.goal, session?.goalState);
      const outputSchema = goal?.outputSchema;
      // A goal with checks or a sign-off: a complete finish must name the objective's parts.
      const requireParts = goal?.verify !== undefined;
      if (stored) {
        // A retry after the answer was stored: the state write of this step may not have landed.
        if (input.state) await store.writeGoalState(input.sessionId, input.state);
        kept.drop(input.sessionId, assistantKey);
        // The attempt that stored it may have seen its write fail and counted itself a billed retry.
        await meter.answeredBy(stored.meta?.attemptKey);
        if (stored.meta?.usage) await meter.recordAnswer(assistantKey, stored.meta.usage);
        const result = modelStepResult(
          stored,
          stored.meta ?? {},
          workspaceContext,
          outputSchema,
          requireParts,
          input.handBack ? AGENT_SUMMARY_CHARS : undefined,
        );
        return withBilled(result, await meter.billedBefore());
      }

      if (!session) {
        throw ApplicationFailure.create({
          message: `session ${input.sessionId} is not in the store`,
          type: 'SessionMissing',
          nonRetryable: true,
        });
      }
      const client = clientFor(input.model, input.baseUrl, input.apiKeyEnv);
      const { fixedTokens, ...request } = await buildStepRequest(store, fixedTexts, {
        input,
        execution,
        session,
        goal,
        workspaceContext,
        requireParts,
      });
      let received = 0;
      // Carried over from the attempts before this one, so that the unreachable clock survives retries.
      let unreachableSinceMs = unreachableSinceOf(context.info.heartbeatDetails);
      // The provider's failures in a row, for the failover rule (failover-count.ts); carried the same
      // way, and read back from the model-error events of attempts whose last heartbeat was lost.
      let failures = await carriedFailureRun(store, input, execution, info);
      let seenAttempt = info.attempt - 1;
      const details = () => {
        const step: ModelStepHeartbeat = { step: input.stepNumber, received, unreachableSinceMs };
        return { ...step, ...failoverHeartbeat(failures, seenAttempt), ...meter.details() };
      };
      // Paced: the stream reports every chunk, and only a change a retry must know is sent at once.
      const beat = pacedHeartbeat(
        (beating: ReturnType<typeof details>) => context.heartbeat(beating),
        details,
        ({ received: _counted, ...material }) => JSON.stringify(material),
      );
      // Progress is saved at most every PROGRESS_SAVE_INTERVAL_MS, the first time that long into the step.
      let lastSaved = Date.now();
      // Heartbeats follow the stream: they go on only while bytes keep arriving within the idle
      // timeout, so a stalled provider never looks alive (the idle timer ends it with a clear error),
      // while a dead worker is still noticed within the heartbeat timeout however slow the model is.
      const idleMs = idleTimeoutMsOf(input.streamIdleTimeoutS);
      let lastBytesAt = Date.now();
      const onBytes = (answering: boolean) => {
        lastBytesAt = Date.now();
        meter.onBytes(answering);
        beat();
      };
      beat();
      const heartbeat = setInterval(() => {
        if (Date.now() - lastBytesAt < idleMs) beat();
      }, MODEL_HEARTBEAT_INTERVAL_MS);
      // Only a failure of the provider call is the provider's: the store writes after it fail as the store.
      let answered = false;
      // An answer an earlier attempt of this activity received and could not store: the provider was
      // paid for it once, so it is stored now instead of asked for again (kept-answers.ts).
      const keptAnswer = kept.get(input.sessionId, assistantKey);
      if (keptAnswer && keptAnswer.instance !== instance) kept.drop(input.sessionId, assistantKey);
      const reused = keptAnswer?.instance === instance ? keptAnswer : undefined;
      let response: ModelResponse | undefined = reused?.response;
      /** The ledger key of the attempt that received the answer (paid-attempts.ts). */
      const answerKey = reused ? paidCallKeys.attempt(instance, reused.attempt) : attemptKey;

      const storeAnswer = (answer: ModelResponse) =>
        storeModelAnswer(
          { store, input, execution, assistantKey, attemptKey, answerKey, workspaceContext, meter },
          answer,
        );

      const deltas = watched
        ? new StreamDeltaWriter(store, input.sessionId, {
            execution,
            step: input.stepNumber,
            attempt: info.attempt,
          })
        : null;
      try {
        if (!response) {
          response = await client.stream({
            ...request,
            stepNumber: input.stepNumber,
            abortSignal: context.cancellationSignal,
            idleTimeoutMs: idleMs,
            onBytes,
            ...(deltas ? { onTextDelta: (text: string) => deltas.push(text) } : {}),
            onProgress: (chars) => {
              received = chars;
              lastBytesAt = Date.now();
              // The provider answered: whatever happens next, it was reachable.
              unreachableSinceMs = null;
              beat();
              const now = Date.now();
              if (now - lastSaved >= PROGRESS_SAVE_INTERVAL_MS) {
                lastSaved = now;
                // Progress only: streamed text itself is never saved, just how far the step got.
                void store
                  .appendEvent(input.sessionId, 'progress', { step: input.stepNumber, receivedChars: chars })
                  .catch(() => undefined);
              }
            },
          });
          meter.answeredUsage = response.usage;
          // Before the answer is stored: a stream that sees the answer has every piece before it.
          await deltas?.close();
        } else {
          log.info(
            `model step ${input.stepNumber} of ${input.sessionId}: storing the answer of attempt ${reused?.attempt}`,
          );
        }
        answered = true;
        const answer = response;
        recordTraceContent(() => ({
          'gen_ai.output.messages': JSON.stringify([
            { role: 'assistant', text: answer.text, toolCalls: answer.toolCalls },
          ]),
        }));
        // Paid for: a store outage now is waited out inside this attempt, as a tool's result is.
        const outage: OutageContext = {
          signal: context.cancellationSignal,
          heartbeat: (waiting) => context.heartbeat({ ...details(), ...waiting }),
          deadlineMs: info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs,
        };
        const { entry, meta } = await untilStored('storing the model answer', outage, () =>
          storeAnswer(answer),
        );
        kept.drop(input.sessionId, assistantKey);
        const result = modelStepResult(
          entry,
          entry.meta ?? meta,
          workspaceContext,
          outputSchema,
          requireParts,
          input.handBack ? AGENT_SUMMARY_CHARS : undefined,
        );
        log.info(`model step ${input.stepNumber} of ${input.sessionId}`, {
          model: input.model,
          toolCalls: result.toolCalls.map((call) => call.summary),
          inputTokens: answer.usage.inputTokens,
          outputTokens: answer.usage.outputTokens,
          finishReason: answer.finishReason,
        });
        result.fixedTokens = fixedTokens;
        if (context.info.attempt > 1) {
          const previous = await store.getEventByKey(
            input.sessionId,
            storeKeys.modelErrorEvent(execution, input.stepNumber, context.info.attempt - 1),
          );
          result.retried = {
            attempts: context.info.attempt,
            // No event: the attempt before never got to say why it ended, so its worker died or stalled.
            lastError:
              (previous?.data as { message?: string } | undefined)?.message ??
              `heartbeat timeout: the worker running attempt ${context.info.attempt - 1} stopped answering`,
          };
        }
        return withBilled(result, await meter.billedBefore());
      } catch (err) {
        deltas?.abandon();
        if (context.cancellationSignal.aborted) {
          // A stopped step runs again as a new activity, which asks anew: this attempt, if billed, is a retry.
          kept.drop(input.sessionId, assistantKey);
          await meter.failed();
          if (isWorkerShutdown(context.cancellationSignal.reason)) {
            // Said so that the next attempt's note names why this one ended (issue 16).
            await store
              .appendEvent(
                input.sessionId,
                'model-error',
                {
                  step: input.stepNumber,
                  attempt: context.info.attempt,
                  type: 'WorkerStopped',
                  message: 'the worker running it stopped',
                  retryable: true,
                },
                storeKeys.modelErrorEvent(execution, input.stepNumber, context.info.attempt),
              )
              .catch(() => undefined);
          }
          throw new CancelledFailure('model step cancelled');
        }
        if (!answered) {
          // The unreachable clock is the provider's: a store outage after the answer neither starts nor resets it.
          unreachableSinceMs = nextUnreachableSince(unreachableSinceMs, isUnreachableError(err), Date.now());
        } else if (response) {
          // Kept for the next attempt on this worker, which stores it instead of asking again.
          kept.keep(input.sessionId, assistantKey, {
            instance,
            attempt: reused?.attempt ?? info.attempt,
            response,
          });
        }
        // Billed and not stored: recorded now (and taken back if a later attempt stores this answer).
        await meter.failed();
        let failure = answered
          ? storeFailure(err)
          : modelStepFailure(err, input, unreachableSinceMs, Date.now());
        let countedForFailover = false;
        if (!answered)
          ({
            failure,
            run: failures,
            counted: countedForFailover,
          } = withFailover(failure, failures, input.failover, Date.now()));
        seenAttempt = info.attempt;
        // The SDK flushes this last heartbeat before the failure, so the next attempt reads it back;
        // if the server loses it, the event below says what it said.
        beat(true);
        // Recorded so that `status` and the step's log line can say why the step was retried.
        await store
          .appendEvent(
            input.sessionId,
            'model-error',
            {
              step: input.stepNumber,
              attempt: context.info.attempt,
              type: failure.type,
              message: failure.message,
              retryable: !failure.nonRetryable,
              failover: countedForFailover,
            },
            storeKeys.modelErrorEvent(execution, input.stepNumber, context.info.attempt),
          )
          .catch(() => undefined);
        throw failure;
      } finally {
        clearInterval(heartbeat);
      }
    },
  };
}

/** The goal definition as of this step: the one the step's state write carries, else the saved one. */
function goalOf(written: unknown, saved: unknown): GoalDefinition | undefined {
  if (written && typeof written === 'object') return written as GoalDefinition;
  return (saved as { goal?: GoalDefinition } | null | undefined)?.goal;
}

/** Whether an activity was cancelled because its worker is shutting down (the SDK's reason for it). */
function isWorkerShutdown(reason: unknown): boolean {
  return reason instanceof Error && reason.message === 'WORKER_SHUTDOWN';
}

/** The result with the attempts billed before it, when there were any. */
function withBilled(result: ModelStepResult, billed: BilledAttempts | null): ModelStepResult {
  return billed ? { ...result, billed } : result;
}

/**
 * A store write after the answer failed: retried. The answer is kept in this worker, so an attempt
 * here stores it without asking the model again (one elsewhere must ask again).
 */
function storeFailure(err: unknown): ApplicationFailure {
  if (err instanceof ApplicationFailure && err.type === FailureType.StoreUnavailable) return err;
  return ApplicationFailure.create({
    type: FailureType.StoreUnavailable,
    message: `session store: ${err instanceof Error ? err.message : String(err)}`,
    nonRetryable: false,
    cause: err instanceof Error ? err : undefined,
  });
}
