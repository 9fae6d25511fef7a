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

/** The variable whose key an `openai-compatible` endpoint gets unless the goal names another (issue 24 §8). */
export const DEFAULT_COMPATIBLE_KEY_ENV = 'OPENAI_COMPATIBLE_API_KEY';
/** OpenAI's own API host: the one `openai-compatible` endpoint that may get OPENAI_API_KEY. */
export const OPENAI_API_HOST = 'api.openai.com';
/** What a variable named for an endpoint's key must look like. */
const KEY_ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Variables that are never an endpoint's key: goalrun's, Temporal's, the store's and another provider's. */
const NEVER_A_KEY = /^(GOALRUN_|TEMPORAL_|DATABASE_URL$|ANTHROPIC_API_KEY$|OLLAMA_|OPENAI_BASE_URL$)/i;

/** Whether a base URL is OpenAI's own API (https://api.openai.com/...). */
export function isOpenAIOwnUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' && parsed.hostname.toLowerCase() === OPENAI_API_HOST;
  } catch {
    return false;
  }
}

/**
 * The variable an `openai-compatible` endpoint's key is read from: the one the goal names
 * (`--api-key-env`, config `api_key_env`), else OPENAI_COMPATIBLE_API_KEY, else, for OpenAI's own
 * API only, OPENAI_API_KEY. Each endpoint gets only its own key: OPENAI_API_KEY never goes to another
 * host, and goalrun's own variables are never a key. Throws ConfigError saying why.
 */
export function endpointKeyEnv(url: string, named: string | undefined, spec: string): string {
  const official = isOpenAIOwnUrl(url);
  if (named === undefined) return official ? 'OPENAI_API_KEY' : DEFAULT_COMPATIBLE_KEY_ENV;
  if (!KEY_ENV_NAME.test(named)) {
    throw new ConfigError(`--api-key-env "${named}" for model ${spec} is not a variable name`);
  }
  if (NEVER_A_KEY.test(named)) {
    throw new ConfigError(
      `--api-key-env ${named} for model ${spec}: that variable is goalrun's own or another provider's, never an endpoint's key`,
    );
  }
  if (named.toUpperCase() === 'OPENAI_API_KEY' && !official) {
    throw new ConfigError(
      `--api-key-env OPENAI_API_KEY for model ${spec}: OPENAI_API_KEY is the key of ${OPENAI_API_HOST} and goes nowhere else; give this endpoint its own key (export ${DEFAULT_COMPATIBLE_KEY_ENV}=..., or another variable named with --api-key-env / config api_key_env)`,
    );
  }
  return named;
}

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
export function checkProviderConfig(
  spec: string,
  env: ProviderEnv,
  baseUrl?: string,
  apiKeyEnv?: string,
): void {
  const parsed = parseModelSpec(spec);
  resolveProviderSettings(parsed, env, baseUrl, apiKeyEnv);
  if (parsed.provider === 'scripted') loadScriptFileSync(parsed.model);
}

/**
 * Resolves the API key and base URL a provider needs from the `--base-url` flag and the environment
 * (an `openai-compatible` endpoint's key from the variable `apiKeyEnv` names, see endpointKeyEnv).
 * Throws ConfigError when one is missing or the URL is not http(s). Reads no files.
 */
export function resolveProviderSettings(
  parsed: ModelSpec,
  env: ProviderEnv,
  baseUrl?: string,
  apiKeyEnv?: string,
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
      const checked = checkedUrl(url, spec) as string;
      // The key is optional: local servers (vLLM, llama.cpp, LM Studio) usually need none.
      return { apiKey: nonEmpty(keyFrom(env, endpointKeyEnv(checked, apiKeyEnv, spec))), baseUrl: checked };
    }
    case 'scripted':
      return {};
  }
}

/** A key variable's value, from the named fields or the worker's lookup of any other name. */
function keyFrom(env: ProviderEnv, name: string): string | undefined {
  if (name === 'OPENAI_API_KEY') return env.OPENAI_API_KEY;
  if (name === DEFAULT_COMPATIBLE_KEY_ENV && env.OPENAI_COMPATIBLE_API_KEY !== undefined)
    return env.OPENAI_COMPATIBLE_API_KEY;
  return env.lookup?.(name);
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
      `base URL for model ${spec} (host ${parsed.host}) carries credentials (user:password@); put the key in its variable instead (OPENAI_API_KEY, ${DEFAULT_COMPATIBLE_KEY_ENV} or --api-key-env)`,
    );
  }
  return url;
}
