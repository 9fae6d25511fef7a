import type {
  JSONSchema7,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3TextPart,
  LanguageModelV3ToolCallPart,
} from '@ai-sdk/provider';
import type { StoredMessage } from '../../core/messages';
import { toPromptToolInput } from './tool-input';
import type { ToolSpec } from './types';

/**
 * Builds the provider prompt from the system prompt and the stored transcript. The stored shape is
 * the prompt shape already; each part is still copied field by field, so that extra fields a store
 * may carry never reach a provider, and so that two things providers reject are fixed here:
 * - a tool call whose stored input is not a JSON object (see toPromptToolInput);
 * - empty text: Anthropic refuses text blocks without non-whitespace text and messages without
 *   content, so such text parts are dropped, and so is a user or assistant message left empty.
 */
export function buildPrompt(system: string, messages: StoredMessage[]): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [];
  if (system.trim() !== '') prompt.push({ role: 'system', content: system });
  for (const message of messages) {
    const converted = convertMessage(message);
    if (converted !== undefined) prompt.push(converted);
  }
  return prompt;
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

function convertMessage(message: StoredMessage): LanguageModelV3Message | undefined {
  switch (message.role) {
    case 'user': {
      const content = message.content.filter(hasText).map(textPart);
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

function hasText(part: { text: string }): boolean {
  return part.text.trim() !== '';
}

function textPart(part: { text: string }): LanguageModelV3TextPart {
  return { type: 'text', text: part.text };
}
