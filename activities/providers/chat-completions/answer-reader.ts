/**
 * Reads the events of a streamed Chat Completions answer into goalrun's ModelResponse: the text,
 * the tool calls assembled from their deltas, the usage and the finish reason. What it accepts and
 * how it fails follow `@ai-sdk/openai-compatible`, whose place it takes for these providers:
 * - an `{"error": ...}` event throws that error object (errors.ts quotes its message and code);
 * - an event that is not JSON, or a usage that is not numbers, throws an AI SDK error class, so the
 *   failure types stay those errors.ts gives them (a retryable ProviderUnavailable);
 * - a stream without a finish reason throws, as an answer cut short.
 */
import { randomBytes } from 'node:crypto';
import { InvalidResponseDataError, JSONParseError } from '@ai-sdk/provider';
import type { ToolCallPart } from '../../../core/messages';
import type { RequestUsage } from '../../../core/usage';
import { parseToolCallInput } from '../tool-input';
import type { ModelResponse } from '../types';

/** The end-of-stream marker OpenAI sends as the last event's data. */
const DONE = '[DONE]';

/** What the reader reports as the answer streams in (ModelRequest's callbacks of the same names). */
export interface AnswerListeners {
  onTextDelta?: (text: string) => void;
  onProgress?: (receivedChars: number) => void;
}

interface PendingCall {
  index: number | undefined;
  id: string | undefined;
  name: string | undefined;
  args: string;
}

interface ChunkUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
}

interface ToolCallDelta {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown } | null;
}

/** Collects one streamed answer; feed it each event's data, then take `response()`. */
export class AnswerReader {
  private text = '';
  private received = 0;
  private readonly calls: PendingCall[] = [];
  private usage: ChunkUsage | undefined;
  private finishReason: string | undefined;
  private refused = false;

  constructor(private readonly listeners: AnswerListeners) {}

  /** One event's data. */
  event(data: string): void {
    if (data === DONE) return;
    let chunk: Record<string, unknown>;
    try {
      chunk = JSON.parse(data);
    } catch (cause) {
      throw new JSONParseError({ text: data, cause });
    }
    if (typeof chunk !== 'object' || chunk === null) {
      throw new InvalidResponseDataError({ data, message: `a stream event is not an object: ${data}` });
    }
    if ('error' in chunk && chunk.error != null) throw chunk.error;
    if (chunk.usage != null) this.usage = checkedUsage(chunk.usage);
    const choices = chunk.choices;
    if (choices == null) return;
    if (!Array.isArray(choices)) {
      throw new InvalidResponseDataError({
        data,
        message: `a stream event's choices are not a list: ${data}`,
      });
    }
    const choice = choices[0] as
      | { finish_reason?: unknown; delta?: Record<string, unknown> | null }
      | undefined;
    if (choice == null) return;
    if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (delta == null) return;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    // Reasoning is not kept, but it counts as progress: a model can think for minutes.
    if (typeof reasoning === 'string') this.progress(reasoning.length);
    this.content(delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal.length > 0) {
      this.refused = true;
      this.addText(delta.refusal);
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) this.toolCall(call as ToolCallDelta);
    }
  }

  /** The answer, once the stream ended. */
  response(): ModelResponse {
    if (this.finishReason === undefined) {
      throw new InvalidResponseDataError({
        data: undefined,
        message: 'Response stream ended without a finish reason.',
      });
    }
    return {
      text: this.text,
      toolCalls: this.toolCalls(),
      usage: requestUsage(this.usage),
      finishReason: unifiedFinishReason(this.finishReason, this.refused),
    };
  }

  private content(content: unknown): void {
    if (typeof content === 'string') {
      if (content.length > 0) this.addText(content);
      return;
    }
    if (!Array.isArray(content)) return;
    for (const part of content as Array<{ type?: unknown; text?: unknown; thinking?: unknown }>) {
      if (part?.type === 'text' && typeof part.text === 'string' && part.text.length > 0) {
        this.addText(part.text);
      } else if (part?.type === 'thinking' && Array.isArray(part.thinking)) {
        for (const piece of part.thinking as Array<{ text?: unknown }>) {
          if (typeof piece?.text === 'string') this.progress(piece.text.length);
        }
      }
    }
  }

  private addText(delta: string): void {
    this.text += delta;
    this.progress(delta.length);
    this.listeners.onTextDelta?.(delta);
  }

  private progress(chars: number): void {
    if (chars === 0) return;
    this.received += chars;
    this.listeners.onProgress?.(this.received);
  }

  /**
   * A piece of a tool call. Providers differ in what each piece names: OpenAI sends the index in
   * every piece and the id and name in the first; others send ids without indices, whole calls in
   * one piece, or index 0 for every call. A piece belongs to the call of its index, else of its id,
   * else to the latest call; an id the call does not have yet starts a new one, and so does a name
   * in a piece that has neither index nor id.
   */
  private toolCall(delta: ToolCallDelta): void {
    const index = typeof delta.index === 'number' ? delta.index : undefined;
    const id = nonBlank(delta.id);
    const name = nonBlank(delta.function?.name);
    let call =
      index !== undefined
        ? this.latest((c) => c.index === index)
        : id !== undefined
          ? this.latest((c) => c.id === id)
          : this.calls.at(-1);
    // Another id, or a name for a call that has one and no index or id to say it is the same: a new call.
    if (call && id !== undefined && call.id !== undefined && call.id !== id) call = undefined;
    if (call && index === undefined && id === undefined && name !== undefined && call.name !== undefined) {
      call = undefined;
    }
    if (!call) {
      call = { index, id, name: undefined, args: '' };
      this.calls.push(call);
    }
    call.id ??= id;
    call.name ??= name;
    const args = delta.function?.arguments;
    if (typeof args === 'string' && args.length > 0) {
      call.args += args;
      this.progress(args.length);
    }
  }

  private latest(match: (call: PendingCall) => boolean): PendingCall | undefined {
    for (let i = this.calls.length - 1; i >= 0; i--) if (match(this.calls[i])) return this.calls[i];
    return undefined;
  }

  private toolCalls(): ToolCallPart[] {
    const named = this.calls.filter((call) => call.name !== undefined);
    if (named.every((call) => call.index !== undefined)) {
      // Stable: calls that shared an index keep their order.
      named.sort((a, b) => (a.index as number) - (b.index as number));
    }
    return named.map((call) => ({
      type: 'tool-call',
      toolCallId: call.id ?? `call_${randomBytes(12).toString('hex')}`,
      toolName: call.name as string,
      input: parseToolCallInput(call.args),
    }));
  }
}

function nonBlank(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function checkedUsage(usage: unknown): ChunkUsage {
  const fields = usage as ChunkUsage;
  const counts = [
    fields.prompt_tokens,
    fields.completion_tokens,
    fields.prompt_tokens_details?.cached_tokens,
  ];
  if (typeof usage !== 'object' || counts.some((count) => count != null && typeof count !== 'number')) {
    throw new InvalidResponseDataError({
      data: usage,
      message: `the stream's usage is not token counts: ${JSON.stringify(usage)}`,
    });
  }
  return fields;
}

/** The usage in goalrun's terms; a count the provider did not report is 0 (as toRequestUsage). */
function requestUsage(usage: ChunkUsage | undefined): RequestUsage {
  const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
  return {
    inputTokens: count(usage?.prompt_tokens),
    outputTokens: count(usage?.completion_tokens),
    cacheReadTokens: count(usage?.prompt_tokens_details?.cached_tokens),
    cacheWriteTokens: 0,
  };
}

/** OpenAI's finish reasons in the AI SDK's words, which the rest of goalrun reads. */
function unifiedFinishReason(reason: string, refused: boolean): string {
  switch (reason) {
    case 'stop':
      return refused ? 'content-filter' : 'stop';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content-filter';
    case 'function_call':
    case 'tool_calls':
      return 'tool-calls';
    default:
      return 'other';
  }
}
