import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { ModelSpec, ProviderSettings } from './spec';
import { byteReportingFetch } from './stream-idle';

/**
 * The AI SDK model object for a parsed specifier. The caller resolves and checks the settings first
 * (resolveProviderSettings): every value is passed explicitly, so that the SDK never falls back to
 * reading process.env on its own. Every provider fetches through byteReportingFetch, so that the
 * stream idle timeout sees each byte (stream-idle.ts). Each provider's package loads when a model of
 * it is first made: a worker pays for the providers its goals use, not all three at its start.
 */
export function createLanguageModel(spec: ModelSpec, settings: ProviderSettings): LanguageModelV3 {
  switch (spec.provider) {
    case 'openai': {
      const { createOpenAI } = require('@ai-sdk/openai') as typeof import('@ai-sdk/openai');
      // `.chat` selects the Chat Completions API, which every OpenAI-compatible proxy also speaks.
      return createOpenAI({
        apiKey: settings.apiKey,
        baseURL: settings.baseUrl,
        fetch: byteReportingFetch,
      }).chat(spec.model);
    }
    case 'anthropic': {
      const { createAnthropic } = require('@ai-sdk/anthropic') as typeof import('@ai-sdk/anthropic');
      return createAnthropic({
        apiKey: settings.apiKey,
        baseURL: settings.baseUrl,
        fetch: byteReportingFetch,
      }).languageModel(spec.model);
    }
    // Models of these two are served by goalrun's own client (chat-completions/client.ts); this one
    // is the reference its tests hold it to, request byte for byte and answer for answer.
    case 'ollama':
    case 'openai-compatible': {
      const { createOpenAICompatible } =
        require('@ai-sdk/openai-compatible') as typeof import('@ai-sdk/openai-compatible');
      return createOpenAICompatible({
        name: spec.provider,
        baseURL: requireBaseUrl(spec, settings),
        apiKey: settings.apiKey,
        // Without it, OpenAI-style servers send no usage in a stream and token accounting reads 0.
        includeUsage: true,
        fetch: byteReportingFetch,
      }).chatModel(spec.model);
    }
    case 'scripted':
      throw new Error('scripted models do not use the AI SDK; use createScriptedClient');
  }
}

function requireBaseUrl(spec: ModelSpec, settings: ProviderSettings): string {
  if (settings.baseUrl === undefined) throw new Error(`no base URL resolved for ${spec.provider}`);
  return settings.baseUrl;
}
