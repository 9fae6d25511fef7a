/**
 * Model specifiers, `provider:model`: parsing and formatting only, with no provider code, so the
 * CLI's light commands can name a model's card (card-names.ts) without loading a provider (issue 10).
 */
import { ConfigError } from './errors';

/** Every provider a model specifier may name, in the order error messages list them. */
export const PROVIDER_NAMES = ['openai', 'anthropic', 'ollama', 'openai-compatible', 'scripted'] as const;

/** A provider name, the part of a model specifier before the first colon. */
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** A parsed model specifier. For `scripted`, `model` is the path of the script file. */
export interface ModelSpec {
  provider: ProviderName;
  model: string;
}

const SPEC_FORMS = `expected <provider>:<model> with provider one of ${PROVIDER_NAMES.join(', ')} (e.g. openai:gpt-4o)`;

/** Parses `provider:model`; throws ConfigError naming the specifier and the valid providers. */
export function parseModelSpec(spec: string): ModelSpec {
  const trimmed = spec.trim();
  // Split at the first colon only: model names may hold colons themselves (ollama:llama3.1:8b).
  const colon = trimmed.indexOf(':');
  if (colon < 0) {
    throw new ConfigError(`invalid model "${spec}": ${SPEC_FORMS}`);
  }
  const provider = trimmed.slice(0, colon);
  const model = trimmed.slice(colon + 1).trim();
  if (!isProviderName(provider)) {
    throw new ConfigError(`invalid model "${spec}": unknown provider "${provider}"; ${SPEC_FORMS}`);
  }
  if (model === '') {
    throw new ConfigError(`invalid model "${spec}": the model name is empty; ${SPEC_FORMS}`);
  }
  return { provider, model };
}

/** Formats a parsed specifier back into its `provider:model` string. */
export function formatModelSpec(spec: ModelSpec): string {
  return `${spec.provider}:${spec.model}`;
}

/** Whether a string is a provider name. */
export function isProviderName(value: string): value is ProviderName {
  return (PROVIDER_NAMES as readonly string[]).includes(value);
}
