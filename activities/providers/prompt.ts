import type {
  JSONSchema7,
  LanguageModelV3FilePart,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3TextPart,
  LanguageModelV3ToolCallPart,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import type { ImagePart, StoredMessage } from '../../core/messages';
import { toPromptToolInput } from './tool-input';
import type { ImageData, PromptCacheHints, ToolSpec } from './types';

/** Anthropic takes at most this many `cache_control` breakpoints in one request. */
export const MAX_CACHE_BREAKPOINTS = 4;

/** What buildPrompt adds besides the system prompt and the transcript. */
export interface PromptOptions {
  /** Per-step text, sent as a last user message after the transcript (see ModelRequest.tail). */
  tail?: string;
  /** Place Anthropic cache breakpoints: the AI SDK's other providers ignore `providerOptions.anthropic`. */
  cache?: PromptCacheHints;
  /** The bytes of the images the messages name (ModelRequest.images); one not here is sent as a line of text. */
  images?: ReadonlyMap<number, ImageData>;
}

/**
 * Builds the provider prompt from the system prompt and the stored transcript. The stored shape is
 * the prompt shape already; each part is still copied field by field, so that extra fields a store
 * may carry never reach a provider, and so that two things providers reject are fixed here:
 * - a tool call whose stored input is not a JSON object (see toPromptToolInput);
 * - empty text: Anthropic refuses text blocks without non-whitespace text and messages without
 *   content, so such text parts are dropped, and so is a user or assistant message left empty.
 */
export function buildPrompt(
  system: string,
  messages: StoredMessage[],
  options: PromptOptions = {},
): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [];
  if (system.trim() !== '') prompt.push({ role: 'system', content: system });
  // Where each stored message landed in the prompt (empty ones are dropped), for the breakpoints.
  const at: Array<number | undefined> = [];
  for (const message of messages) {
    const converted = convertMessage(message, options.images);
    at.push(converted === undefined ? undefined : prompt.length);
    if (converted !== undefined) prompt.push(converted);
  }
  if (options.cache) {
    const control: SharedV3ProviderOptions = {
      anthropic: { cacheControl: { type: 'ephemeral', ttl: options.cache.ttl } },
    };
    for (const index of cacheBreakpoints(prompt, at, messages, options.cache.headCount)) {
      prompt[index] = { ...prompt[index], providerOptions: control } as (typeof prompt)[number];
    }
  }
  if (options.tail && options.tail.trim() !== '') {
    prompt.push({ role: 'user', content: [{ type: 'text', text: options.tail }] });
  }
  return prompt;
}

/**
 * The prompt indices that get a cache breakpoint, at most MAX_CACHE_BREAKPOINTS:
 * - the system prompt (with the tool schemas before it, Anthropic caches both as one prefix);
 * - the end of the head (first message, summary, kept messages), which survives pruning;
 * - the end of the previous request's transcript (the message before the newest answer), where the
 *   previous step wrote its entry: read back here however many blocks the step added;
 * - the last message, written for the next step.
 */
export function cacheBreakpoints(
  prompt: LanguageModelV3Prompt,
  at: Array<number | undefined>,
  messages: StoredMessage[],
  headCount: number,
): number[] {
  const lastAt = (end: number): number | undefined => {
    for (let i = Math.min(end, at.length) - 1; i >= 0; i--) if (at[i] !== undefined) return at[i];
    return undefined;
  };
  let newestAnswer = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'assistant') {
      newestAnswer = i;
      break;
    }
  }
  const chosen = [
    prompt[0]?.role === 'system' ? 0 : undefined,
    lastAt(headCount),
    newestAnswer >= 0 ? lastAt(newestAnswer) : undefined,
    lastAt(messages.length),
  ];
  const unique = [...new Set(chosen.filter((index): index is number => index !== undefined))];
  return unique.sort((a, b) => a - b).slice(-MAX_CACHE_BREAKPOINTS);
}

/** The tools as function tools; undefined when there are none (OpenAI rejects an empty list). */
export function toFunctionTools(tools: ToolSpec[]): LanguageModelV3FunctionTool[] | undefined {
  if (tools.length === 0) return undefined;
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as JSONSchema7,
  }));
}

function convertMessage(
  message: StoredMessage,
  images: ReadonlyMap<number, ImageData> | undefined,
): LanguageModelV3Message | undefined {
  switch (message.role) {
    case 'user': {
      const content: Array<LanguageModelV3TextPart | LanguageModelV3FilePart> = [];
      for (const part of message.content) {
        if (part.type === 'image') content.push(imagePart(part, images?.get(part.imageId)));
        else if (hasText(part)) content.push(textPart(part));
      }
      return content.length > 0 ? { role: 'user', content } : undefined;
    }
    case 'assistant': {
      const content: Array<LanguageModelV3TextPart | LanguageModelV3ToolCallPart> = [];
      for (const part of message.content) {
        if (part.type === 'text') {
          if (hasText(part)) content.push(textPart(part));
        } else {
          content.push({
            type: 'tool-call',
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: toPromptToolInput(part.input),
          });
        }
      }
      return content.length > 0 ? { role: 'assistant', content } : undefined;
    }
    case 'tool':
      // Kept even if it looked empty: a tool call without its result is rejected by every provider.
      return {
        role: 'tool',
        content: message.content.map((part) => ({
          type: 'tool-result',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output: { type: part.output.type, value: part.output.value },
        })),
      };
  }
}

/** An image as a file part (every provider of the AI SDK sends `image/*` files as images), or a line saying it is gone. */
function imagePart(
  part: ImagePart,
  image: ImageData | undefined,
): LanguageModelV3TextPart | LanguageModelV3FilePart {
  if (!image)
    return { type: 'text', text: `[image ${part.name} (${part.mediaType}) is no longer in the store]` };
  return { type: 'file', mediaType: image.mediaType, data: image.data, filename: part.name };
}

function hasText(part: { text: string }): boolean {
  return part.text.trim() !== '';
}

function textPart(part: { text: string }): LanguageModelV3TextPart {
  return { type: 'text', text: part.text };
}
