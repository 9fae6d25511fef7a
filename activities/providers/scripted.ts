import { ApplicationFailure } from '@temporalio/common';
import { SUMMARY_SECTIONS } from '../../core/compaction/summary-text';
import { FailureType } from '../../core/errors';
import { CHARS_PER_TOKEN } from '../../core/limits';
import type { ToolCallPart } from '../../core/messages';
import type { RequestUsage } from '../../core/usage';
import { abortErrorFrom } from './errors';
import { loadScriptFile, type ScriptedSummary, type ScriptedTurn } from './scripted-file';
import { parseToolCallInput } from './tool-input';
import type { ModelClient, ModelRequest, ModelResponse } from './types';

/** How often a delayed scripted turn reports progress, like a model streaming slowly. */
export const SCRIPTED_PROGRESS_INTERVAL_MS = 500;

/**
 * A model that replays a JSON script (see scripted-file.ts) for demos and tests, without network:
 * step N answers with turns[N-1]. The file is read on every step, so a bad edit shows at once, as a
 * non-retryable ConfigError failure. Aborting rejects with an AbortError, like the real clients.
 */
export function createScriptedClient(spec: string, file: string): ModelClient {
  return {
    spec,
    async stream(request: ModelRequest): Promise<ModelResponse> {
      const { abortSignal } = request;
      if (abortSignal.aborted) throw abortErrorFrom(abortSignal);
      let turn: ScriptedTurn | undefined;
      try {
        const script = await loadScriptFile(file);
        if (request.purpose?.kind === 'summary') {
          return summaryAnswer(script.summaries?.[request.purpose.compaction - 1], request);
        }
        turn = script.turns[request.stepNumber - 1];
      } catch (err) {
        if (err instanceof ApplicationFailure) throw err;
        // loadScriptFile throws only ConfigError, whose message already names the file.
        throw ApplicationFailure.create({
          type: FailureType.ConfigError,
          message: (err as Error).message,
          nonRetryable: true,
        });
      }
      const response = turn
        ? replayTurn(turn, request)
        : exhausted(`(scripted model: no turn ${request.stepNumber} in ${file})`, request);
      const chars = responseChars(response);
      if (turn?.delayMs) await waitWithProgress(turn.delayMs, chars, request);
      if (abortSignal.aborted) throw abortErrorFrom(abortSignal);
      if (chars > 0) request.onProgress?.(chars);
      // A scripted model "streams" its text in one piece.
      if (response.text !== '') request.onTextDelta?.(response.text);
      return response;
    },
  };
}

function replayTurn(turn: ScriptedTurn, request: ModelRequest): ModelResponse {
  const text = turn.text ?? '';
  // Deterministic ids keep replays and test assertions stable across runs.
  const toolCalls: ToolCallPart[] = (turn.toolCalls ?? []).map((call, index) => ({
    type: 'tool-call',
    toolCallId: `call_${request.stepNumber}_${index}`,
    toolName: call.name,
    // argsRaw goes through the same parsing as a real model's streamed arguments.
    input: call.argsRaw !== undefined ? parseToolCallInput(call.argsRaw) : (call.args ?? {}),
  }));
  const usage: RequestUsage = turn.usage
    ? {
        inputTokens: turn.usage.input,
        outputTokens: turn.usage.output,
        cacheReadTokens: turn.usage.cacheRead ?? 0,
        cacheWriteTokens: turn.usage.cacheWrite ?? 0,
      }
    : estimateUsage(request, text, toolCalls);
  return { text, toolCalls, usage, finishReason: toolCalls.length > 0 ? 'tool-calls' : 'stop' };
}

/** A scripted summarizer answer: the scripted text, a scripted failure, or a built-in summary. */
function summaryAnswer(summary: ScriptedSummary | undefined, request: ModelRequest): ModelResponse {
  if (summary && 'fail' in summary) {
    throw ApplicationFailure.create({ type: FailureType.ProviderUnavailable, message: summary.fail });
  }
  const text =
    summary?.text ??
    SUMMARY_SECTIONS.map((section) => `## ${section}\n(scripted summary of the earlier conversation)`).join(
      '\n\n',
    );
  const usage: RequestUsage = summary?.usage
    ? {
        inputTokens: summary.usage.input,
        outputTokens: summary.usage.output,
        cacheReadTokens: summary.usage.cacheRead ?? 0,
        cacheWriteTokens: summary.usage.cacheWrite ?? 0,
      }
    : estimateUsage(request, text, []);
  return { text, toolCalls: [], usage, finishReason: 'stop' };
}

function exhausted(text: string, request: ModelRequest): ModelResponse {
  return { text, toolCalls: [], usage: estimateUsage(request, text, []), finishReason: 'stop' };
}

/** A rough token count (characters / CHARS_PER_TOKEN), so that usage gauges move in demos. */
function estimateUsage(request: ModelRequest, text: string, toolCalls: ToolCallPart[]): RequestUsage {
  const requestChars =
    request.system.length + JSON.stringify(request.messages).length + JSON.stringify(request.tools).length;
  const responseChars = text.length + (toolCalls.length > 0 ? JSON.stringify(toolCalls).length : 0);
  return {
    inputTokens: Math.ceil(requestChars / CHARS_PER_TOKEN),
    outputTokens: Math.ceil(responseChars / CHARS_PER_TOKEN),
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
}

/** Characters a real model would have streamed for this response: text plus tool arguments. */
function responseChars(response: ModelResponse): number {
  const argsChars = response.toolCalls.reduce(
    (sum, call) => sum + (typeof call.input === 'string' ? call.input : JSON.stringify(call.input)).length,
    0,
  );
  return response.text.length + argsChars;
}

/** Waits `delayMs`, reporting progress as if the response streamed in evenly; rejects on abort. */
function waitWithProgress(delayMs: number, totalChars: number, request: ModelRequest): Promise<void> {
  const { abortSignal, onProgress } = request;
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const ticker = setInterval(() => {
      const fraction = Math.min(1, (Date.now() - started) / delayMs);
      onProgress?.(Math.floor(totalChars * fraction));
    }, SCRIPTED_PROGRESS_INTERVAL_MS);
    const done = setTimeout(() => {
      cleanup();
      resolve();
    }, delayMs);
    const onAbort = () => {
      cleanup();
      reject(abortErrorFrom(abortSignal));
    };
    const cleanup = () => {
      clearInterval(ticker);
      clearTimeout(done);
      abortSignal.removeEventListener('abort', onAbort);
    };
    abortSignal.addEventListener('abort', onAbort, { once: true });
    // The signal may have fired while the script file was read, before the listener existed.
    if (abortSignal.aborted) onAbort();
  });
}
