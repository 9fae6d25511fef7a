import * as path from 'node:path';
import { ConfigError } from '../../core/errors';
import { formatModelSpec, type ModelSpec, parseModelSpec } from './model-spec';
import { loadScriptFileSync } from './scripted-file';
import type { ProviderEnv } from './types';

export {
  formatModelSpec,
  type ModelSpec,
  PROVIDER_NAMES,
  type ProviderName,
  parseModelSpec,
} from './model-spec';

/** Where a model client sends its requests, resolved from the flag and the environment. */
export interface ProviderSettings {
  apiKey?: string;
  baseUrl?: string;
}

/** Ollama's OpenAI-compatible endpoint when OLLAMA_BASE_URL is not set. */
export const DEFAULT_OLLAMA_BASE_URL = 'http://localhost:11434/v1';

/**
 * Makes a `scripted:<file>` specifier absolute against `cwd`, so that a worker with another working
 * directory finds the same file. Other specifiers come back unchanged (but validated).
 */
export function normalizeModelSpec(spec: string, cwd: string = process.cwd()): string {
  const parsed = parseModelSpec(spec);
  if (parsed.provider !== 'scripted') return formatModelSpec(parsed);
  return formatModelSpec({ provider: 'scripted', model: path.resolve(cwd, parsed.model) });
}

/**
 * Checks everything a model needs before a goal starts: a parsable specifier, its API key, its base
 * URL, and for `scripted:` a readable, valid script file. Throws ConfigError with one clear line.
 */
export function checkProviderConfig(spec: string, env: ProviderEnv, baseUrl?: string): void {
  const parsed = parseModelSpec(spec);
  resolveProviderSettings(parsed, env, baseUrl);
  if (parsed.provider === 'scripted') loadScriptFileSync(parsed.model);
}

/**
 * Resolves the API key and base URL a provider needs from the `--base-url` flag and the environment.
 * Throws ConfigError when one is missing or the URL is not http(s). Reads no files.
 */
export function resolveProviderSettings(
  parsed: ModelSpec,
  env: ProviderEnv,
  baseUrl?: string,
): ProviderSettings {
  const spec = formatModelSpec(parsed);
  const flagUrl = nonEmpty(baseUrl);
  switch (parsed.provider) {
    case 'openai':
      return {
        apiKey: requireKey('OPENAI_API_KEY', env.OPENAI_API_KEY, spec),
        baseUrl: checkedUrl(flagUrl ?? nonEmpty(env.OPENAI_BASE_URL), spec),
      };
    case 'anthropic':
      // OPENAI_BASE_URL is deliberately not read here: it names an OpenAI endpoint, never Anthropic's.
      return {
        apiKey: requireKey('ANTHROPIC_API_KEY', env.ANTHROPIC_API_KEY, spec),
        baseUrl: checkedUrl(flagUrl, spec),
      };
    case 'ollama':
      return {
        baseUrl: checkedUrl(flagUrl ?? nonEmpty(env.OLLAMA_BASE_URL) ?? DEFAULT_OLLAMA_BASE_URL, spec),
      };
    case 'openai-compatible': {
      const url = flagUrl ?? nonEmpty(env.OPENAI_BASE_URL);
      if (url === undefined) {
        throw new ConfigError(`model ${spec} needs a base URL: pass --base-url or set OPENAI_BASE_URL`);
      }
      // The key is optional: local servers (vLLM, llama.cpp, LM Studio) usually need none.
      return { apiKey: nonEmpty(env.OPENAI_API_KEY), baseUrl: checkedUrl(url, spec) };
    }
    case 'scripted':
      return {};
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function requireKey(name: string, value: string | undefined, spec: string): string {
  const key = nonEmpty(value);
  if (key === undefined) throw new ConfigError(`${name} is not set; it is needed for model ${spec}`);
  return key;
}

function checkedUrl(url: string | undefined, spec: string): string | undefined {
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`base URL "${url}" for model ${spec} is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`base URL "${url}" for model ${spec} must start with http:// or https://`);
  }
  // From the environment too (OPENAI_BASE_URL): a URL with a password would reach error messages,
  // and through them the goal's history and logs. The message names the host only.
  if (parsed.username || parsed.password) {
    throw new ConfigError(
      `base URL for model ${spec} (host ${parsed.host}) carries credentials (user:password@); put the key in OPENAI_API_KEY instead`,
    );
  }
  return url;
}
