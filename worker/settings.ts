/**
 * goalrun's settings: environment variables, then `$GOALRUN_HOME/config.json`, then defaults.
 * Provider keys are read here for the worker's own use and never leave the process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ProviderEnv } from '../activities/providers/types';
import { ConfigError } from '../core/errors';
import { DEFAULT_LIMITS, type GoalLimits } from '../core/goal';
import { DEFAULT_MODEL, DEFAULT_PROVIDER_UNREACHABLE_MINUTES } from '../core/limits';
import { fastConfig } from './config-fast-path';
import { configSchema, type GoalrunConfig } from './config-schema';
import {
  findProjectConfig,
  mergeProjectConfig,
  type ProjectConfigOutcome,
  readProjectConfig,
} from './project-config';
import {
  DEFAULT_NAMESPACE,
  DEFAULT_TEMPORAL_ADDRESS,
  resolveTemporalConnection,
  type TemporalConnectionSettings,
} from './temporal-connection';

export { temporalHttpBaseUrl } from './config-fast-path';
export type { GoalrunConfig } from './config-schema';

// In core/limits.ts so the CLI's help can name it without loading the settings.
export { DEFAULT_MODEL, DEFAULT_NAMESPACE, DEFAULT_TEMPORAL_ADDRESS };
/** Task queues derived from a store are named `goalrun-<first hex of the store id>`. */
export const TASK_QUEUE_PREFIX = 'goalrun-';
/** Hex characters of the store id in a derived task queue name: enough that two stores never meet. */
export const TASK_QUEUE_STORE_ID_CHARS = 12;

/**
 * The default task queue of a store: derived from its identity, so that workers of one store never
 * pick up goals of another (whose transcript they could not find).
 */
export function taskQueueForStore(storeId: string): string {
  return `${TASK_QUEUE_PREFIX}${storeId.slice(0, TASK_QUEUE_STORE_ID_CHARS)}`;
}

/** Everything a goalrun process needs to know about where things are. */
export interface Settings {
  home: string;
  configPath: string;
  /** The config files that were read: the global one if it exists, then the project's (issue 17). */
  configFiles?: string[];
  /** What the project's `.goalrun/config.json` applied and what it asked for in vain (issue 24). */
  project?: ProjectConfigOutcome;
  config: GoalrunConfig;
  /**
   * How to connect to Temporal (worker/temporal-connection.ts): TEMPORAL_* variables, a temporal.toml
   * profile, then the config. Worked out when first read, so a command that never talks to Temporal
   * neither reads temporal.toml nor fails on it.
   */
  readonly temporal: TemporalConnectionSettings;
  /** The address of {@link temporal}. */
  readonly temporalAddress: string;
  /** Temporal's HTTP API (TEMPORAL_HTTP_ADDRESS or the config), read by the read-only commands. */
  temporalHttpAddress?: string;
  /** The namespace of {@link temporal}. */
  readonly namespace: string;
  /** A task queue named by GOALRUN_TASK_QUEUE or the config; else it is derived from the store. */
  taskQueueOverride?: string;
  databaseUrl?: string;
  defaultModel: string;
  defaultLimits: GoalLimits;
  /** Minutes a provider may be unreachable (connection refused, DNS) before the goal fails. */
  providerUnreachableMinutes: number;
  providerEnv: ProviderEnv;
}

/** The data directory: `GOALRUN_HOME` or `~/.goalrun`. */
export function goalrunHome(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.GOALRUN_HOME || path.join(os.homedir(), '.goalrun'));
}

/** Reads and validates the config file; a missing file is an empty config. */
export function loadConfigFile(configPath: string): GoalrunConfig {
  let text: string;
  try {
    text = fs.readFileSync(configPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(`cannot read config file ${configPath}: ${(err as Error).message}`);
  }
  return parseConfigText(configPath, text);
}

/** Validates a config file's text; a ConfigError names the file and the bad key. */
export function parseConfigText(configPath: string, text: string): GoalrunConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config file ${configPath} is not valid JSON: ${(err as Error).message}`);
  }
  // Most configs hold only plain keys, checked without zod; anything else gets the schema's verdict
  // and its messages. Loading zod would cost the light commands a twentieth of a second (issue 10).
  const fast = fastConfig(raw);
  if (fast) return fast;
  const parsed = configSchema().safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `${issue.path.join('.') || '(top level)'}: ${issue.message}`)
      .join('; ');
    throw new ConfigError(`config file ${configPath} is invalid: ${problems}`);
  }
  return parsed.data;
}

/** What loadSettings takes besides the environment. */
export interface LoadSettingsOptions {
  /** `--profile NAME`: the temporal.toml profile to connect with (wins over TEMPORAL_PROFILE). */
  profile?: string;
}

/**
 * Settings from the environment and the config file. Throws ConfigError on a bad config file; a bad
 * temporal.toml or profile throws when the Temporal settings are first read.
 */
export function loadSettings(
  env: NodeJS.ProcessEnv = process.env,
  projectDir?: string,
  options: LoadSettingsOptions = {},
): Settings {
  const home = goalrunHome(env);
  const configPath = path.join(home, 'config.json');
  const globalConfig = loadConfigFile(configPath);
  const configFiles = fs.existsSync(configPath) ? [configPath] : [];
  // The project's file may only make goals stricter (worker/project-config.ts).
  const projectConfigDir = projectDir === undefined ? null : findProjectConfig(projectDir);
  let config = globalConfig;
  let project: ProjectConfigOutcome | undefined;
  if (projectConfigDir) {
    const read = readProjectConfig(projectConfigDir, parseConfigText);
    if (read.config) {
      const merged = mergeProjectConfig(globalConfig, read.config);
      config = merged.config;
      project = { file: read.file, applied: merged.applied, ignored: merged.ignored };
      configFiles.push(read.file);
    } else {
      project = { file: read.file, applied: [], ignored: [`the whole file: ${read.problem}`] };
    }
  }
  let temporal: TemporalConnectionSettings | undefined;
  const connection = () => {
    temporal ??= resolveTemporalConnection(env, config, { profile: options.profile, configPath });
    return temporal;
  };
  return {
    home,
    configPath,
    configFiles,
    ...(project ? { project } : {}),
    config,
    get temporal() {
      return connection();
    },
    get temporalAddress() {
      return connection().address;
    },
    get namespace() {
      return connection().namespace;
    },
    temporalHttpAddress: env.TEMPORAL_HTTP_ADDRESS || config.temporal_http_address || undefined,
    taskQueueOverride: env.GOALRUN_TASK_QUEUE || config.task_queue || undefined,
    databaseUrl: env.DATABASE_URL || config.database_url || undefined,
    defaultModel: env.GOALRUN_MODEL || config.model || DEFAULT_MODEL,
    defaultLimits: {
      maxIterations: config.max_iterations ?? DEFAULT_LIMITS.maxIterations,
      maxSteps: config.max_steps ?? DEFAULT_LIMITS.maxSteps,
      maxMinutes: config.max_minutes ?? DEFAULT_LIMITS.maxMinutes,
      noProgressLimit: config.no_progress_limit ?? DEFAULT_LIMITS.noProgressLimit,
      ...(config.max_cost_usd !== undefined ? { maxCostUsd: config.max_cost_usd } : {}),
      ...(config.max_tokens !== undefined ? { maxTokens: config.max_tokens } : {}),
    },
    providerUnreachableMinutes: config.provider_unreachable_minutes ?? DEFAULT_PROVIDER_UNREACHABLE_MINUTES,
    providerEnv: {
      OPENAI_API_KEY: env.OPENAI_API_KEY,
      OPENAI_COMPATIBLE_API_KEY: env.OPENAI_COMPATIBLE_API_KEY,
      // A goal's --api-key-env names a variable of this process: read when its endpoint is called.
      lookup: (name) => env[name],
      OPENAI_BASE_URL: env.OPENAI_BASE_URL || config.base_url,
      ANTHROPIC_API_KEY: env.ANTHROPIC_API_KEY,
      OLLAMA_BASE_URL: env.OLLAMA_BASE_URL,
    },
  };
}
