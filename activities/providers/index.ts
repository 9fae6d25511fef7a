import { createAiSdkClient } from './ai-sdk-client';
import { createChatCompletionsClient } from './chat-completions/client';
import { createLanguageModel } from './language-model';
import { createScriptedClient } from './scripted';
import { parseModelSpec, resolveProviderSettings } from './spec';
import type { ModelClient, ProviderEnv } from './types';

export { createAiSdkClient, toRequestUsage } from './ai-sdk-client';
export {
  abortErrorFrom,
  type FailureContext,
  isAbortError,
  MAX_RETRY_AFTER_MS,
  redactSecrets,
  toActivityFailure,
} from './errors';
export { createLanguageModel } from './language-model';
export { buildPrompt, toFunctionTools } from './prompt';
export { parseRetryAfter, parseRetryAfterValue } from './retry-after';
export { createScriptedClient, SCRIPTED_PROGRESS_INTERVAL_MS } from './scripted';
export {
  loadScriptFile,
  loadScriptFileSync,
  parseScriptFile,
  type ScriptedTurn,
  type ScriptFile,
  scriptFileSchema,
} from './scripted-file';
export {
  checkProviderConfig,
  DEFAULT_COMPATIBLE_KEY_ENV,
  DEFAULT_OLLAMA_BASE_URL,
  formatModelSpec,
  type ModelSpec,
  normalizeModelSpec,
  PROVIDER_NAMES,
  type ProviderName,
  type ProviderSettings,
  parseModelSpec,
  resolveProviderSettings,
} from './spec';
export { parseToolCallInput, toPromptToolInput } from './tool-input';
export type { ModelClient, ModelRequest, ModelResponse, ProviderEnv, ToolSpec } from './types';

/** Options of createModelClient. */
export interface ModelClientOptions {
  /** The `--base-url` flag; wins over OPENAI_BASE_URL / OLLAMA_BASE_URL. */
  baseUrl?: string;
  /** The variable an `openai-compatible` endpoint's key is read from (`--api-key-env`). */
  apiKeyEnv?: string;
  env: ProviderEnv;
}

/**
 * Builds the client for a model specifier. Throws ConfigError for a bad specifier, a missing key or
 * base URL; a scripted file is read (and validated) on each request, not here.
 */
export function createModelClient(spec: string, options: ModelClientOptions): ModelClient {
  const parsed = parseModelSpec(spec);
  if (parsed.provider === 'scripted') return createScriptedClient(spec, parsed.model);
  const settings = resolveProviderSettings(parsed, options.env, options.baseUrl, options.apiKeyEnv);
  const context = {
    provider: parsed.provider,
    model: parsed.model,
    secrets: settings.apiKey !== undefined ? [settings.apiKey] : [],
  };
  // The Chat Completions endpoints have a client of goalrun's own (chat-completions/client.ts).
  if ((parsed.provider === 'openai-compatible' || parsed.provider === 'ollama') && settings.baseUrl) {
    return createChatCompletionsClient(
      spec,
      parsed.model,
      { baseUrl: settings.baseUrl, apiKey: settings.apiKey },
      context,
    );
  }
  return createAiSdkClient(spec, createLanguageModel(parsed, settings), context);
}
