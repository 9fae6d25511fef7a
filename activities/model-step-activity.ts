/**
 * The model-step activity: builds the context from the store and the plan, streams the
 * answer, and stores it once under the step's key, so a retry after a crash calls no model twice.
 * What it returns for a stored answer is model-step-result.ts; its clients are model-clients.ts.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { FailureType } from '../core/errors';
import { EVENT_KINDS } from '../core/event-kinds';
import { finishSpecWithResult } from '../core/finish';
import type { GoalDefinition } from '../core/goal';
import { MODEL_HEARTBEAT_INTERVAL_MS, PROGRESS_SAVE_INTERVAL_MS } from '../core/limits';
import { type MessageMeta, type StoredMessage, userText } from '../core/messages';
import { storeKeys } from '../core/store-keys';
import { clipBytes } from '../core/stream-events';
import { renderTaskList, taskView } from '../core/task-graph';
import type { TaskGraph } from '../core/task-graph-types';
import { estimateTokens } from '../core/tokens';
import { TOOL } from '../core/tool-names';
import { buildPlannedContext } from './context-builder';
import { latestContext } from './extensions/extension-activities';
import { mcpToolSpecs } from './extensions/mcp-model-view';
import { modelClientCache } from './model-clients';
import { modelStepResult, summaryOf } from './model-step-result';
import { systemPrompt } from './prompt';
import { isUnreachableError } from './providers/errors';
import { parseModelSpec } from './providers/model-spec';
import { idleTimeoutMsOf } from './providers/stream-idle';
import {
  type ModelStepHeartbeat,
  modelStepFailure,
  nextUnreachableSince,
  unreachableSinceOf,
} from './providers/unreachable';
import { cacheTtlFor, placeTaskList, promptLayoutOf } from './request-layout';
import { toolSpecsFor } from './tool-catalog';
import { recordTraceContent } from './trace-content';
import type { ModelStepInput, ModelStepResult } from './types';
import { uniqueToolCalls } from './unique-tool-calls';
import type { ActivityDeps } from './workflow-activities';

/** The most of a step's text the event log keeps for the stream (the message itself is whole). */
const STEP_TEXT_MAX_BYTES = 16 * 1024;

/** Creates the model-step activity. */
export function createModelStepActivity(deps: ActivityDeps) {
  const { store } = deps;
  const clientFor = modelClientCache(deps);

  return {
    /** One model call: builds the context from the store, streams the answer, stores it once. */
    async modelStep(input: ModelStepInput): Promise<ModelStepResult> {
      const execution = input.execution ?? 1;
      const assistantKey = storeKeys.assistant(execution, input.stepNumber);
      // Independent reads go together: each store round trip is on every step's path.
      const [stored, session, workspaceContext] = await Promise.all([
        store.getMessageByKey(input.sessionId, assistantKey),
        store.getSession(input.sessionId),
        latestContext(store, input.sessionId),
      ]);
      const goal = goalOf(input.state?.set.goal, session?.goalState);
      const outputSchema = goal?.outputSchema;
      if (stored) {
        // A retry after the answer was stored: the state write of this step may not have landed.
        if (input.state) await store.writeGoalState(input.sessionId, input.state);
        return modelStepResult(stored, stored.meta ?? {}, workspaceContext, outputSchema);
      }

      if (!session) {
        throw ApplicationFailure.create({
          message: `session ${input.sessionId} is not in the store`,
          type: 'SessionMissing',
          nonRetryable: true,
        });
      }
      const client = clientFor(input.model, input.baseUrl);
      // Keyed: a retried attempt does not announce the step twice. Written before the model is called.
      // Only Anthropic's cache needs breakpoints, and their lifetime depends on the previous step's time.
      const breakpoints = parseModelSpec(input.model).provider === 'anthropic';
      const [, planned, previousAnswer] = await Promise.all([
        store.appendEvent(
          input.sessionId,
          EVENT_KINDS.stepStart,
          { step: input.stepNumber, model: input.model },
          storeKeys.stepStartEvent(execution, input.stepNumber),
        ),
        buildPlannedContext(store, input.sessionId, input.upToSeq, input.plan),
        breakpoints && input.stepNumber > 1
          ? store.getEventByKey(input.sessionId, storeKeys.usageEvent(execution, input.stepNumber - 1))
          : null,
      ]);
      const { messages } = planned;
      // The task list is rendered per request, so no compaction can drop it; it goes after the
      // transcript, so a todo-write changes no byte of the prefix the provider has cached.
      const savedTasks = (session.goalState as { tasks?: TaskGraph } | null)?.tasks;
      const tasks = (input.state?.set.tasks as TaskGraph | undefined) ?? savedTasks ?? [];
      const taskList = placeTaskList(
        promptLayoutOf(),
        tasks.length > 0 ? renderTaskList(taskView(tasks)) : null,
      );
      // The project instructions and MCP tools the tool host gathered for this execution: read from
      // one stored row, so the request's prefix is byte-identical from step to step (prompt caching).
      const system = systemPrompt({
        objective: session.objective,
        workspace: session.projectDir,
        tasks: taskList.inSystem,
        instructions: workspaceContext?.instructions.text || null,
        appended: goal?.appendSystemPrompt ?? null,
      });
      // A goal with an output schema has a finish tool that requires a result matching it.
      const offered = toolSpecsFor(input.tools).map((spec) =>
        outputSchema && spec.name === TOOL.finish ? finishSpecWithResult(spec, outputSchema) : spec,
      );
      const tools = [...offered, ...mcpToolSpecs(workspaceContext)];
      // On the step's `chat` span, with --trace-content only (worker/genai-spans.ts).
      recordTraceContent(() => ({
        'gen_ai.system_instructions': system,
        'gen_ai.input.messages': JSON.stringify(
          taskList.tail ? [...messages, userText(taskList.tail)] : messages,
        ),
      }));
      // What every request carries whatever compaction does: the pressure compaction cannot relieve.
      const fixedTokens =
        estimateTokens(system) + estimateTokens(taskList.tail ?? '') + estimateTokens(JSON.stringify(tools));
      const context = Context.current();
      let received = 0;
      // Carried over from the attempts before this one, so that the unreachable clock survives retries.
      let unreachableSinceMs = unreachableSinceOf(context.info.heartbeatDetails);
      const beat = () => {
        const details: ModelStepHeartbeat = { step: input.stepNumber, received, unreachableSinceMs };
        context.heartbeat(details);
      };
      // Progress is saved at most every PROGRESS_SAVE_INTERVAL_MS, the first time that long into the step.
      let lastSaved = Date.now();
      // Heartbeats follow the stream: they go on only while bytes keep arriving within the idle
      // timeout, so a stalled provider never looks alive (the idle timer ends it with a clear error),
      // while a dead worker is still noticed within the heartbeat timeout however slow the model is.
      const idleMs = idleTimeoutMsOf(input.streamIdleTimeoutS);
      let lastBytesAt = Date.now();
      const onBytes = () => {
        lastBytesAt = Date.now();
        beat();
      };
      beat();
      const heartbeat = setInterval(() => {
        if (Date.now() - lastBytesAt < idleMs) beat();
      }, MODEL_HEARTBEAT_INTERVAL_MS);
      // Only a failure of the provider call is the provider's: the store writes after it fail as the store.
      let answered = false;
      try {
        const response = await client.stream({
          system,
          messages,
          tail: taskList.tail,
          cache: breakpoints
            ? { headCount: planned.headCount, ttl: cacheTtlFor(previousAnswer?.createdAt, Date.now()) }
            : undefined,
          tools,
          stepNumber: input.stepNumber,
          abortSignal: context.cancellationSignal,
          idleTimeoutMs: idleMs,
          onBytes,
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
        answered = true;
        recordTraceContent(() => ({
          'gen_ai.output.messages': JSON.stringify([
            { role: 'assistant', text: response.text, toolCalls: response.toolCalls },
          ]),
        }));
        const toolCalls = await uniqueToolCalls(store, input.sessionId, response.toolCalls);
        const message: StoredMessage = {
          role: 'assistant',
          content: [...(response.text ? [{ type: 'text' as const, text: response.text }] : []), ...toolCalls],
        };
        const meta: MessageMeta = {
          usage: response.usage,
          finishReason: response.finishReason,
          model: input.model,
        };
        // The answer, its usage and the state this step started from commit together.
        const { seq, created } = await store.appendMessage(input.sessionId, assistantKey, message, {
          meta,
          state: input.state,
          event: {
            kind: EVENT_KINDS.modelUsage,
            data: {
              step: input.stepNumber,
              model: input.model,
              usage: response.usage,
              finishReason: response.finishReason,
              // What the stream shows of the step: its text and its calls (arguments cut short).
              text: clipBytes(response.text ?? '', STEP_TEXT_MAX_BYTES).text,
              toolCalls: toolCalls.map((call) => ({
                id: call.toolCallId,
                name: call.toolName,
                summary: summaryOf(call, workspaceContext),
                arguments: clipBytes(JSON.stringify(call.input ?? null)).text,
              })),
            },
            key: storeKeys.usageEvent(execution, input.stepNumber),
          },
        });
        // Another attempt may have stored its answer first: then that one is the answer.
        const entry = (created ? null : await store.getMessageByKey(input.sessionId, assistantKey)) ?? {
          seq,
          key: assistantKey,
          message,
          meta,
        };
        const result = modelStepResult(entry, entry.meta ?? meta, workspaceContext, outputSchema);
        log.info(`model step ${input.stepNumber} of ${input.sessionId}`, {
          model: input.model,
          toolCalls: result.toolCalls.map((call) => call.summary),
          inputTokens: response.usage.inputTokens,
          outputTokens: response.usage.outputTokens,
          finishReason: response.finishReason,
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
        return result;
      } catch (err) {
        if (context.cancellationSignal.aborted) {
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
        // The unreachable clock is the provider's: a store outage after the answer neither starts nor resets it.
        if (!answered) {
          unreachableSinceMs = nextUnreachableSince(unreachableSinceMs, isUnreachableError(err), Date.now());
        }
        // The SDK flushes this last heartbeat with the failure, so the next attempt reads it back.
        beat();
        const failure = answered
          ? storeFailure(err)
          : modelStepFailure(err, input, unreachableSinceMs, Date.now());
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

/** A store write after the answer failed: retried (the answer is not stored, so the model is asked again). */
function storeFailure(err: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.StoreUnavailable,
    message: `session store: ${err instanceof Error ? err.message : String(err)}`,
    nonRetryable: false,
    cause: err instanceof Error ? err : undefined,
  });
}
