/**
 * The activities of the goal workflow. Each one is idempotent: its store writes are keyed by step
 * number or tool-call id, so a retry after a crash finds its earlier work instead of redoing it.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { ConfigError, FailureType } from '../core/errors';
import { FINISH_TOOL_SPEC } from '../core/finish';
import type { GoalState } from '../core/goal';
import type { LedgerEntry } from '../core/ledger';
import { ledgerEntryFor } from '../core/ledger-entry';
import {
  MODEL_HEARTBEAT_INTERVAL_MS,
  PROGRESS_SAVE_INTERVAL_MS,
  SPOOL_MIN_TOKENS,
  TOOL_RESULT_MAX_CHARS,
  WORKFLOW_TOOL_ARGS_MAX_BYTES,
} from '../core/limits';
import { type StoredMessage, type TranscriptEntry, textOf, toolCallsOf, userText } from '../core/messages';
import { renderTaskList, taskView } from '../core/task-graph';
import type { TaskGraph } from '../core/task-graph-types';
import { TODO_WRITE_TOOL_SPEC } from '../core/todo-write-tool';
import { estimateTokens } from '../core/tokens';
import { WORKFLOW_HANDLED_TOOL_NAMES } from '../core/tool-names';
import { clipChars, edgeLines, truncateForModel } from '../core/truncate';
import type { RequestUsage } from '../core/usage';
import { projectHash } from '../store/session-id';
import type { SessionStore } from '../store/types';
import { buildContext } from './context-builder';
import { firstMessageText, systemPrompt } from './prompt';
import { createModelClient, toActivityFailure } from './providers';
import type { ModelClient, ProviderEnv, ToolSpec } from './providers/types';
import { findTool, toolSpecOf } from './tool-catalog';
import type {
  AppendMessageInput,
  LoadCheckpointResult,
  ModelStepInput,
  ModelStepResult,
  OpenSessionInput,
  OpenSessionResult,
  RecordEventInput,
  RunToolInput,
  RunToolResult,
  SaveCheckpointInput,
} from './types';

/** What the activities need from their process. */
export interface ActivityDeps {
  store: SessionStore;
  /** Provider settings read from the worker's environment (never from workflow input). */
  env: ProviderEnv;
  /** Builds a model client; tests may pass their own. */
  modelClient?: (spec: string, baseUrl: string | undefined) => ModelClient;
}

/** Keys of the store rows the activities write, in one place so that retries find them. */
const keys = {
  assistant: (step: number) => `step:${step}`,
  toolResult: (toolCallId: string) => `result:${toolCallId}`,
  usageEvent: (step: number) => `usage:${step}`,
  toolEvent: (toolCallId: string) => `tool:${toolCallId}`,
};

/** Creates the goal workflow's activities over a store and a provider environment. */
export function createGoalActivities(deps: ActivityDeps) {
  const { store } = deps;
  const clients = new Map<string, ModelClient>();
  const clientFor = (spec: string, baseUrl: string | undefined): ModelClient => {
    const cacheKey = `${spec}|${baseUrl ?? ''}`;
    let client = clients.get(cacheKey);
    if (!client) {
      try {
        client = deps.modelClient
          ? deps.modelClient(spec, baseUrl)
          : createModelClient(spec, { baseUrl, env: deps.env });
      } catch (err) {
        if (err instanceof ConfigError) {
          throw ApplicationFailure.create({
            message: err.message,
            type: FailureType.ConfigError,
            nonRetryable: true,
          });
        }
        throw err;
      }
      clients.set(cacheKey, client);
    }
    return client;
  };

  return {
    /** Creates the session row and stores the first message (objective and environment snapshot). */
    async openSession(input: OpenSessionInput): Promise<OpenSessionResult> {
      const { goal } = input;
      await store.createSession({
        id: goal.sessionId,
        projectDir: goal.workspace,
        projectHash: projectHash(goal.workspace),
        objective: goal.objective,
        model: goal.model,
        workflowId: input.workflowId,
      });
      const existing = await store.getMessageByKey(goal.sessionId, 'initial');
      const message = existing?.message ?? userText(await firstMessageText(goal, new Date()));
      const { seq } = existing ?? (await store.appendMessage(goal.sessionId, 'initial', message));
      await store.appendEvent(goal.sessionId, 'session-opened', { workflowId: input.workflowId }, 'opened');
      return { first: ledgerEntryFor(seq, 'initial', message) };
    },

    /** One model call: builds the context from the store, streams the answer, stores it once. */
    async modelStep(input: ModelStepInput): Promise<ModelStepResult> {
      const stored = await store.getMessageByKey(input.sessionId, keys.assistant(input.stepNumber));
      if (stored) return modelStepResult(stored, await storedUsage(store, input.sessionId, input.stepNumber));

      const session = await store.getSession(input.sessionId);
      if (!session) {
        throw ApplicationFailure.create({
          message: `session ${input.sessionId} is not in the store`,
          type: 'SessionMissing',
          nonRetryable: true,
        });
      }
      const client = clientFor(input.model, input.baseUrl);
      const messages = await buildContext(store, input.sessionId, input.upToSeq, input.plan);
      // The plan lives in the system prompt, rebuilt per request, so no compaction can drop it.
      const checkpoint = await store.latestCheckpoint(input.sessionId);
      const tasks = (checkpoint?.tasks as TaskGraph | null) ?? [];
      const system = systemPrompt({
        objective: session.objective,
        workspace: session.projectDir,
        tasks: tasks.length > 0 ? renderTaskList(taskView(tasks)) : null,
      });
      const tools = toolSpecs(input.tools);
      // What every request carries whatever compaction does: the pressure compaction cannot relieve.
      const fixedTokens = estimateTokens(system) + estimateTokens(JSON.stringify(tools));
      const context = Context.current();
      let received = 0;
      let lastSaved = 0;
      const heartbeat = setInterval(
        () => context.heartbeat({ step: input.stepNumber, received }),
        MODEL_HEARTBEAT_INTERVAL_MS,
      );
      try {
        const response = await client.stream({
          system,
          messages,
          tools,
          stepNumber: input.stepNumber,
          abortSignal: context.cancellationSignal,
          onProgress: (chars) => {
            received = chars;
            context.heartbeat({ step: input.stepNumber, received });
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
        const message: StoredMessage = {
          role: 'assistant',
          content: [
            ...(response.text ? [{ type: 'text' as const, text: response.text }] : []),
            ...response.toolCalls,
          ],
        };
        // The usage event goes first: if we crash between the two writes, the retry still finds it.
        await store.appendEvent(
          input.sessionId,
          'model-usage',
          { step: input.stepNumber, usage: response.usage, finishReason: response.finishReason },
          keys.usageEvent(input.stepNumber),
        );
        const { seq } = await store.appendMessage(input.sessionId, keys.assistant(input.stepNumber), message);
        const entry = (await store.getMessageByKey(input.sessionId, keys.assistant(input.stepNumber))) ?? {
          seq,
          key: keys.assistant(input.stepNumber),
          message,
        };
        const result = modelStepResult(entry, { usage: response.usage, finishReason: response.finishReason });
        log.info(`model step ${input.stepNumber} of ${input.sessionId}`, {
          model: input.model,
          toolCalls: result.toolCalls.map((call) => call.summary),
          inputTokens: response.usage.inputTokens,
          outputTokens: response.usage.outputTokens,
          finishReason: response.finishReason,
        });
        result.fixedTokens = fixedTokens;
        if (context.info.attempt > 1) {
          result.retried = { attempts: context.info.attempt, lastError: await lastModelError(store, input) };
        }
        return result;
      } catch (err) {
        if (context.cancellationSignal.aborted) throw new CancelledFailure('model step cancelled');
        const [provider, ...rest] = input.model.split(':');
        const failure =
          err instanceof ApplicationFailure
            ? err
            : toActivityFailure(err, { provider: provider ?? input.model, model: rest.join(':') });
        // Recorded so that `status` and the step's log line can say why the step was retried.
        await store
          .appendEvent(input.sessionId, 'model-error', {
            step: input.stepNumber,
            attempt: context.info.attempt,
            type: failure.type,
            message: failure.message,
            retryable: !failure.nonRetryable,
          })
          .catch(() => undefined);
        throw failure;
      } finally {
        clearInterval(heartbeat);
      }
    },

    /** Runs one workspace tool call and stores its result (spooled and truncated when large). */
    async runTool(input: RunToolInput): Promise<RunToolResult> {
      const resultKey = keys.toolResult(input.toolCallId);
      const stored = await store.getMessageByKey(input.sessionId, resultKey);
      if (stored) return storedToolResult(store, input, stored);

      const assistant = await store.getMessageByKey(input.sessionId, keys.assistant(input.stepNumber));
      const call = assistant
        ? toolCallsOf(assistant.message).find((c) => c.toolCallId === input.toolCallId)
        : undefined;
      if (!call) {
        throw ApplicationFailure.create({
          message: `tool call ${input.toolCallId} of step ${input.stepNumber} is not in the store`,
          type: 'ToolCallMissing',
          nonRetryable: true,
        });
      }
      const context = Context.current();
      const outcome = await executeTool(call.toolName, call.input, {
        workspace: input.workspace,
        sessionId: input.sessionId,
        toolCallId: input.toolCallId,
        signal: context.cancellationSignal,
        heartbeat: (details) => context.heartbeat(details),
        store,
      });
      // PostgreSQL text and jsonb cannot hold NUL; a binary-ish output would fail every retry.
      outcome.output = outcome.output.replaceAll('\u0000', '\uFFFD');
      const bytes = Buffer.byteLength(outcome.output, 'utf8');
      let spoolId: number | undefined;
      if (estimateTokens(outcome.output) > SPOOL_MIN_TOKENS) {
        ({ spoolId } = await store.writeSpool(
          input.sessionId,
          input.toolCallId,
          call.toolName,
          outcome.output,
        ));
      }
      const shown =
        spoolId === undefined
          ? outcome.output
          : truncateForModel(outcome.output, spoolId, TOOL_RESULT_MAX_CHARS);
      const message: StoredMessage = {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: input.toolCallId,
            toolName: call.toolName,
            output: outcome.ok ? { type: 'text', value: shown } : { type: 'error-text', value: shown },
          },
        ],
      };
      const edges = edgeLines(outcome.output);
      const summary = {
        toolCallId: input.toolCallId,
        toolName: call.toolName,
        ok: outcome.ok,
        changedWorkspace: outcome.changedWorkspace,
        bytes,
        spoolId,
        firstLine: edges.first,
        lastLine: edges.last,
      };
      await store.appendEvent(input.sessionId, 'tool', summary, keys.toolEvent(input.toolCallId));
      log.info(`${call.toolName} of ${input.sessionId} ${outcome.ok ? 'ok' : 'failed'}`, {
        step: input.stepNumber,
        bytes,
        spoolId,
        lastLine: edges.last,
      });
      const { seq } = await store.appendMessage(input.sessionId, resultKey, message);
      return {
        entry: ledgerEntryFor(seq, resultKey, message, { spoolId, bytes, ok: outcome.ok }),
        ok: outcome.ok,
        changedWorkspace: outcome.changedWorkspace,
        firstLine: edges.first,
        lastLine: edges.last,
      };
    },

    /** Stores a message the workflow wrote itself; idempotent on its key. */
    async appendMessage(input: AppendMessageInput): Promise<{ seq: number; entry: LedgerEntry }> {
      const { seq } = await store.appendMessage(input.sessionId, input.key, input.message);
      // goalrun's notices (compaction, failure budget) are events too, for `goalrun` and dashboards.
      if (input.key.startsWith('notice:')) {
        await store.appendEvent(input.sessionId, 'notice', { text: textOf(input.message) }, input.key);
      }
      return { seq, entry: ledgerEntryFor(seq, input.key, input.message) };
    },

    /** Saves a checkpoint of the control state and mirrors status and counters on the session row. */
    async saveCheckpoint(input: SaveCheckpointInput): Promise<void> {
      const goalState = { ...input.state, keptProgress: input.keptProgress ?? null };
      await store.saveCheckpoint(input.sessionId, goalState, input.tasks);
      await store.updateSession(input.sessionId, {
        status: input.state.status,
        reason: input.state.reason,
        goalState,
      });
      if (input.event)
        await store.appendEvent(input.sessionId, input.event.kind, input.event.data, input.event.key);
      if (input.keptProgress) {
        await store.appendEvent(input.sessionId, 'kept-progress', { summary: input.keptProgress });
      }
    },

    /** Loads what a resumed execution starts from: the last checkpoint and a ledger rebuilt from the transcript. */
    async loadCheckpoint(sessionId: string): Promise<LoadCheckpointResult> {
      const checkpoint = await store.latestCheckpoint(sessionId);
      if (!checkpoint) {
        throw ApplicationFailure.create({
          message: `session ${sessionId} has no checkpoint to resume from`,
          type: 'NoCheckpoint',
          nonRetryable: true,
        });
      }
      const saved = checkpoint.goalState as Omit<GoalState, 'ledger'> & { keptProgress?: string | null };
      const { keptProgress, ...rest } = saved;
      const transcript = await store.listMessages(sessionId);
      const answered = new Set<string>();
      for (const entry of transcript) {
        if (entry.message.role === 'tool')
          for (const part of entry.message.content) answered.add(part.toolCallId);
      }
      const unansweredToolCalls = transcript
        .flatMap((entry) => toolCallsOf(entry.message))
        .filter((call) => !answered.has(call.toolCallId))
        .map((call) => ({ toolCallId: call.toolCallId, toolName: call.toolName }));
      return {
        state: {
          ...rest,
          tasks: rest.tasks ?? (checkpoint.tasks as TaskGraph | null) ?? [],
          ledger: transcript.map(ledgerEntryOf),
        },
        tasks: checkpoint.tasks,
        keptProgress: keptProgress ?? null,
        unansweredToolCalls,
      };
    },

    /** Appends an event (notices, traces). */
    async recordEvent(input: RecordEventInput): Promise<void> {
      await store.appendEvent(input.sessionId, input.kind, input.data, input.key);
    },
  };
}

/** The activity interface the workflow proxies. */
export type GoalActivities = ReturnType<typeof createGoalActivities>;

/** Runs a tool by name with validated arguments; every problem becomes a result the model can read. */
async function executeTool(
  toolName: string,
  rawInput: unknown,
  context: Parameters<NonNullable<ReturnType<typeof findTool>>['run']>[1],
): Promise<{ ok: boolean; output: string; changedWorkspace: boolean }> {
  const tool = findTool(toolName);
  if (!tool) {
    return { ok: false, output: `unknown tool "${toolName}"`, changedWorkspace: false };
  }
  const parsed = tool.parse(rawInput);
  if (!parsed.ok) return { ok: false, output: parsed.error, changedWorkspace: false };
  try {
    return await tool.run(parsed.args, context);
  } catch (err) {
    if (context.signal.aborted) throw new CancelledFailure(`${toolName} cancelled`);
    return { ok: false, output: `${toolName} failed: ${(err as Error).message}`, changedWorkspace: false };
  }
}

/** Tool specs offered to the model: workspace tools from the catalog, `finish` from core. */
function toolSpecs(names: string[]): ToolSpec[] {
  return names.flatMap((name): ToolSpec[] => {
    if (name === FINISH_TOOL_SPEC.name) {
      return [
        {
          ...FINISH_TOOL_SPEC,
          inputSchema: FINISH_TOOL_SPEC.inputSchema as unknown as Record<string, unknown>,
        },
      ];
    }
    if (name === TODO_WRITE_TOOL_SPEC.name) {
      return [
        {
          ...TODO_WRITE_TOOL_SPEC,
          inputSchema: TODO_WRITE_TOOL_SPEC.inputSchema as unknown as Record<string, unknown>,
        },
      ];
    }
    const spec = toolSpecOf(name);
    return spec ? [spec] : [];
  });
}

/** The ledger entry of a stored message. */
function ledgerEntryOf(entry: TranscriptEntry): LedgerEntry {
  return ledgerEntryFor(entry.seq, entry.key, entry.message);
}

/** The message of the latest failed attempt of a model step. */
async function lastModelError(store: SessionStore, input: ModelStepInput): Promise<string> {
  const events = await store.listEvents(input.sessionId);
  const failures = events.filter(
    (event) => event.kind === 'model-error' && (event.data as { step?: number }).step === input.stepNumber,
  );
  return (failures.at(-1)?.data as { message?: string } | undefined)?.message ?? 'unknown error';
}

async function storedUsage(
  store: SessionStore,
  sessionId: string,
  step: number,
): Promise<{ usage: RequestUsage; finishReason: string }> {
  const events = await store.listEvents(sessionId);
  const event = events.find(
    (candidate) => candidate.kind === 'model-usage' && (candidate.data as { step?: number }).step === step,
  );
  const data = event?.data as { usage?: RequestUsage; finishReason?: string } | undefined;
  return {
    usage: data?.usage ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    finishReason: data?.finishReason ?? 'unknown',
  };
}

function modelStepResult(
  entry: TranscriptEntry,
  meta: { usage: RequestUsage; finishReason: string },
): ModelStepResult {
  const toolCalls = toolCallsOf(entry.message).map((call) => {
    const workflowTool = WORKFLOW_HANDLED_TOOL_NAMES.includes(call.toolName);
    const tool = findTool(call.toolName);
    const parsed = tool?.parse(call.input);
    const summary = parsed?.ok
      ? tool!.summarize(parsed.args)
      : `${call.toolName}${tool || workflowTool ? '' : ' (unknown tool)'}`;
    // Workflow tools need their arguments in the workflow; anything else stays in the store.
    const inputBytes = JSON.stringify(call.input ?? null).length;
    const input = !workflowTool
      ? undefined
      : inputBytes <= WORKFLOW_TOOL_ARGS_MAX_BYTES
        ? call.input
        : `arguments too large (${inputBytes} bytes, at most ${WORKFLOW_TOOL_ARGS_MAX_BYTES}); send fewer or shorter items`;
    return { toolCallId: call.toolCallId, toolName: call.toolName, input, summary: clipChars(summary, 120) };
  });
  const text = textOf(entry.message).trim();
  return {
    entry: ledgerEntryFor(entry.seq, entry.key, entry.message),
    toolCalls,
    usage: meta.usage,
    finishReason: meta.finishReason,
    textPreview: clipChars(text.split('\n')[0] ?? '', 120),
  };
}

async function storedToolResult(
  store: SessionStore,
  input: RunToolInput,
  stored: TranscriptEntry,
): Promise<RunToolResult> {
  const events = await store.listEvents(input.sessionId);
  const event = events.find(
    (candidate) =>
      candidate.kind === 'tool' &&
      (candidate.data as { toolCallId?: string }).toolCallId === input.toolCallId,
  );
  const data = (event?.data ?? {}) as Partial<{
    ok: boolean;
    changedWorkspace: boolean;
    bytes: number;
    spoolId: number;
    firstLine: string;
    lastLine: string;
  }>;
  const part = stored.message.role === 'tool' ? stored.message.content[0] : undefined;
  const ok = data.ok ?? part?.output.type === 'text';
  return {
    entry: ledgerEntryFor(stored.seq, stored.key, stored.message, {
      spoolId: data.spoolId,
      bytes: data.bytes,
      ok,
    }),
    ok,
    changedWorkspace: data.changedWorkspace ?? true,
    firstLine: data.firstLine ?? '',
    lastLine: data.lastLine ?? '',
  };
}
