/**
 * The JSON body of a streamed Chat Completions request, built from the provider prompt that
 * buildPrompt makes (prompt.ts decides what is sent; this file only says it in OpenAI's words).
 * The body is the one `@ai-sdk/openai-compatible` sends for the same prompt, key for key, so that
 * moving a goal between the two clients changes nothing a provider or its prompt cache sees
 * (test/providers/chat-completions.test.ts compares them byte for byte).
 */
import type {
  LanguageModelV3FilePart,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3TextPart,
} from '@ai-sdk/provider';
import type { ToolSpec } from '../types';

/** One message of a Chat Completions request. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatUserPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** A part of a user message that is more than one text. */
export type ChatUserPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** A tool call the model made, as sent back to it. */
export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A streamed Chat Completions request. */
export interface ChatCompletionsBody {
  model: string;
  messages: ChatMessage[];
  tools?: Array<{
    type: 'function';
    function: { name: string; description: string; parameters: Record<string, unknown> };
  }>;
  stream: true;
  /** Without it OpenAI-style servers send no usage in a stream, and token accounting would read 0. */
  stream_options: { include_usage: true };
}

/** The request body for `model` with this prompt and these tools. */
export function chatCompletionsBody(
  model: string,
  prompt: LanguageModelV3Prompt,
  tools: ToolSpec[],
): ChatCompletionsBody {
  const messages: ChatMessage[] = [];
  for (const message of prompt) messages.push(...toChatMessages(message));
  return {
    model,
    messages,
    // OpenAI rejects an empty list: no tools means no key.
    ...(tools.length > 0
      ? {
          tools: tools.map((tool) => ({
            type: 'function' as const,
            function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
          })),
        }
      : {}),
    stream: true,
    stream_options: { include_usage: true },
  };
}

function toChatMessages(message: LanguageModelV3Message): ChatMessage[] {
  switch (message.role) {
    case 'system':
      return [{ role: 'system', content: message.content }];
    case 'user': {
      const [only] = message.content;
      if (message.content.length === 1 && only.type === 'text') return [{ role: 'user', content: only.text }];
      return [{ role: 'user', content: message.content.map(toUserPart) }];
    }
    case 'assistant': {
      let text = '';
      const calls: ChatToolCall[] = [];
      for (const part of message.content) {
        if (part.type === 'text') text += part.text;
        else if (part.type === 'tool-call') {
          calls.push({
            id: part.toolCallId,
            type: 'function',
            function: { name: part.toolName, arguments: toolArguments(part.input) },
          });
        }
      }
      // A message of tool calls alone has null content, as OpenAI's own answers do.
      return calls.length > 0
        ? [{ role: 'assistant', content: text || null, tool_calls: calls }]
        : [{ role: 'assistant', content: text }];
    }
    case 'tool':
      return message.content.flatMap((part) =>
        part.type === 'tool-result'
          ? [{ role: 'tool' as const, tool_call_id: part.toolCallId, content: toolOutputText(part.output) }]
          : [],
      );
  }
}

function toUserPart(part: LanguageModelV3TextPart | LanguageModelV3FilePart): ChatUserPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  // buildPrompt makes file parts of images only; anything else it says in text.
  const mediaType = part.mediaType === 'image/*' ? 'image/jpeg' : part.mediaType;
  const url =
    part.data instanceof URL
      ? part.data.toString()
      : `data:${mediaType};base64,${typeof part.data === 'string' ? part.data : Buffer.from(part.data).toString('base64')}`;
  return { type: 'image_url', image_url: { url } };
}

/** A stored input is an object by now (toPromptToolInput); a string that is JSON already goes as is. */
function toolArguments(input: unknown): string {
  if (typeof input === 'string') {
    try {
      JSON.parse(input);
      return input;
    } catch {
      return JSON.stringify(input);
    }
  }
  return JSON.stringify(input);
}

function toolOutputText(output: { type: string; value?: unknown; reason?: string }): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return String(output.value);
    case 'execution-denied':
      return output.reason ?? 'Tool call execution denied.';
    default:
      return JSON.stringify(output.value);
  }
}
