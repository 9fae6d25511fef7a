/**
 * The tool activity: runs one workspace tool call, spools and truncates its output, and stores
 * the result once under the tool-call id.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { ledgerEntryFor } from '../core/ledger-entry';
import { SPOOL_MIN_TOKENS, TOOL_RESULT_MAX_CHARS } from '../core/limits';
import { type StoredMessage, type TranscriptEntry, toolCallsOf } from '../core/messages';
import { storeKeys } from '../core/store-keys';
import { estimateTokens } from '../core/tokens';
import { edgeLines, truncateForModel } from '../core/truncate';
import type { SessionStore } from '../store/types';
import { findTool } from './tool-catalog';
import type { RunToolInput, RunToolResult } from './types';

/** Creates the tool activity. */
export function createToolActivity(store: SessionStore) {
  return {
    /** Runs one workspace tool call and stores its result (spooled and truncated when large). */
    async runTool(input: RunToolInput): Promise<RunToolResult> {
      const resultKey = storeKeys.toolResult(input.toolCallId);
      const stored = await store.getMessageByKey(input.sessionId, resultKey);
      if (stored) return storedToolResult(store, input, stored);

      const assistant = await store.getMessageByKey(
        input.sessionId,
        input.assistantKey ?? storeKeys.assistant(1, input.stepNumber),
      );
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
      await store.appendEvent(input.sessionId, 'tool', summary, storeKeys.toolEvent(input.toolCallId));
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
  };
}

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
