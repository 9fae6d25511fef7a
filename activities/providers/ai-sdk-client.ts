import type {
  LanguageModelV3,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
} from '@ai-sdk/provider';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../core/errors';
import type { ToolCallPart } from '../../core/messages';
import type { RequestUsage } from '../../core/usage';
import type { FailureContext } from './errors';
import { buildPrompt, toFunctionTools } from './prompt';
import { providerCall } from './provider-call';
import { parseToolCallInput } from './tool-input';
import type { ModelClient, ModelRequest, ModelResponse } from './types';

/**
 * A ModelClient over an AI SDK LanguageModelV3. It calls `doStream` directly rather than
 * `streamText`: the SDK then neither retries (Temporal is the only retry layer) nor validates tool
 * arguments (the tool layer reports bad arguments to the model instead of failing the step).
 * Failures leave as provider-call.ts says.
 */
export function createAiSdkClient(
  spec: string,
  model: LanguageModelV3,
  context: FailureContext,
): ModelClient {
  return {
    spec,
    stream: (request: ModelRequest) =>
      providerCall(request, context, async (signal) => {
        const { stream } = await model.doStream({
          prompt: buildPrompt(request.system, request.messages, {
            tail: request.tail,
            cache: context.provider === 'anthropic' ? request.cache : undefined,
            images: request.images,
          }),
          tools: toFunctionTools(request.tools),
          abortSignal: signal,
        });
        return await consumeStream(stream, request, context);
      }),
  };
}

/**
 * Maps the SDK's usage to goalrun's; a count the provider did not report is 0. The SDK reads the
 * cache from OpenAI's `prompt_tokens_details.cached_tokens` and Anthropic's `cache_read_input_tokens`
 * and `cache_creation_input_tokens`; Anthropic's split of the writes by lifetime
 * (`cache_creation.ephemeral_1h_input_tokens`) is only in its raw usage, in the provider metadata.
 */
export function toRequestUsage(
  usage: LanguageModelV3Usage | undefined,
  providerMetadata?: SharedV3ProviderMetadata,
): RequestUsage {
  const hourWrites = anthropicHourWrites(providerMetadata);
  return {
    inputTokens: usage?.inputTokens.total ?? 0,
    outputTokens: usage?.outputTokens.total ?? 0,
    cacheReadTokens: usage?.inputTokens.cacheRead ?? 0,
    cacheWriteTokens: usage?.inputTokens.cacheWrite ?? 0,
    ...(hourWrites > 0 ? { cacheWrite1hTokens: hourWrites } : {}),
  };
}

function anthropicHourWrites(metadata: SharedV3ProviderMetadata | undefined): number {
  const usage = metadata?.anthropic?.usage as {
    cache_creation?: { ephemeral_1h_input_tokens?: unknown };
  } | null;
  const count = usage?.cache_creation?.ephemeral_1h_input_tokens;
  return typeof count === 'number' && Number.isFinite(count) && count > 0 ? count : 0;
}

async function consumeStream(
  stream: ReadableStream<LanguageModelV3StreamPart>,
  request: ModelRequest,
  context: FailureContext,
): Promise<ModelResponse> {
  let text = '';
  let receivedChars = 0;
  const toolCalls: ToolCallPart[] = [];
  let finish: Extract<LanguageModelV3StreamPart, { type: 'finish' }> | undefined;

  const received = (delta: string) => {
    receivedChars += delta.length;
    request.onProgress?.(receivedChars);
  };

  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      switch (part.type) {
        case 'text-delta':
          text += part.delta;
          received(part.delta);
          request.onTextDelta?.(part.delta);
          break;
        // Reasoning is not kept, but it counts as progress: a model can think for minutes.
        case 'reasoning-delta':
        case 'tool-input-delta':
          received(part.delta);
          break;
        case 'tool-call':
          // Provider-executed tools (web search and the like) are never requested, so never ours to run.
          if (!part.providerExecuted) {
            toolCalls.push({
              type: 'tool-call',
              toolCallId: part.toolCallId,
              toolName: part.toolName,
              input: parseToolCallInput(part.input),
            });
          }
          break;
        case 'finish':
          finish = part;
          break;
        case 'error':
          throw part.error;
      }
    }
  } finally {
    // After an error part, stop the HTTP response instead of leaving the connection to drain.
    reader.cancel().catch(() => undefined);
  }

  if (finish === undefined) {
    throw ApplicationFailure.create({
      type: FailureType.ProviderUnavailable,
      message: `${context.provider} model ${context.model}: the response stream ended without a finish`,
    });
  }
  return {
    text,
    toolCalls,
    usage: toRequestUsage(finish.usage, finish.providerMetadata),
    finishReason: finish.finishReason.unified,
  };
}
