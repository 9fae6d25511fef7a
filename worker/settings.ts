/**
 * goalrun's settings: environment variables, then `$GOALRUN_HOME/config.json`, then defaults.
 * Provider keys are read here for the worker's own use and never leave the process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { ProviderEnv } from '../activities/providers/types';
import { ConfigError } from '../core/errors';
import { DEFAULT_LIMITS, type GoalLimits } from '../core/goal';
import { DEFAULT_MODEL, DEFAULT_PROVIDER_UNREACHABLE_MINUTES } from '../core/limits';
import { APPROVAL_POLICIES, SANDBOX_MODES } from '../core/sandbox-settings';

// In core/limits.ts so the CLI's help can name it without loading this file's zod schema.
export { DEFAULT_MODEL };
export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';
export const DEFAULT_NAMESPACE = 'default';
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

const positiveInt = z.number().int().positive();

/** The `sandbox` section of the config (issue 8): how tool processes are contained. */
const sandboxSchema = z
  .object({
    mode: z.enum(SANDBOX_MODES).optional(),
    network: z.boolean().optional(),
    writable_roots: z
      .array(z.string().refine((dir) => path.isAbsolute(dir), 'must be an absolute path'))
      .optional(),
    env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a variable name')).optional(),
    approval: z.enum(APPROVAL_POLICIES).optional(),
    approval_timeout_minutes: positiveInt.optional(),
  })
  .strict();

/** The config file's schema. Unknown keys are errors, so a typo never silently does nothing. */
export const configSchema = z
  .object({
    model: z.string().min(1).optional(),
    base_url: z.string().url().optional(),
    max_iterations: positiveInt.optional(),
    max_steps: positiveInt.optional(),
    max_minutes: positiveInt.optional(),
    no_progress_limit: positiveInt.optional(),
    temporal_address: z.string().min(1).optional(),
    temporal_namespace: z.string().min(1).optional(),
    task_queue: z.string().min(1).optional(),
    database_url: z.string().min(1).optional(),
    auto_compact_enabled: z.boolean().optional(),
    auto_compact_threshold_pct: z.number().min(1).max(100).optional(),
    auto_compact_target_pct: z.number().min(1).max(100).optional(),
    auto_compact_max_failures: positiveInt.optional(),
    context_window: positiveInt.optional(),
    summarizer_model: z.string().min(1).optional(),
    backup_model: z.string().min(1).optional(),
    provider_unreachable_minutes: positiveInt.optional(),
    sandbox: sandboxSchema.optional(),
    /** The tools queue of a tool host (see `goalrun worker --role tools`) that new goals send their tools to. */
    tools_queue: z.string().min(1).optional(),
  })
  .strict();

export type GoalrunConfig = z.infer<typeof configSchema>;

/** Everything a goalrun process needs to know about where things are. */
export interface Settings {
  home: string;
  configPath: string;
  config: GoalrunConfig;
  temporalAddress: string;
  namespace: string;
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
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config file ${configPath} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `${issue.path.join('.') || '(top level)'}: ${issue.message}`)
      .join('; ');
    throw new ConfigError(`config file ${configPath} is invalid: ${problems}`);
  }
  return parsed.data;
}

/** Settings from the environment and the config file. Throws ConfigError on a bad config file. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const home = goalrunHome(env);
  const configPath = path.join(home, 'config.json');
  const config = loadConfigFile(configPath);
  return {
    home,
    configPath,
    config,
    temporalAddress: env.TEMPORAL_ADDRESS || config.temporal_address || DEFAULT_TEMPORAL_ADDRESS,
    namespace: env.TEMPORAL_NAMESPACE || config.temporal_namespace || DEFAULT_NAMESPACE,
    taskQueueOverride: env.GOALRUN_TASK_QUEUE || config.task_queue || undefined,
    databaseUrl: env.DATABASE_URL || config.database_url || undefined,
    defaultModel: env.GOALRUN_MODEL || config.model || DEFAULT_MODEL,
    defaultLimits: {
      maxIterations: config.max_iterations ?? DEFAULT_LIMITS.maxIterations,
      maxSteps: config.max_steps ?? DEFAULT_LIMITS.maxSteps,
      maxMinutes: config.max_minutes ?? DEFAULT_LIMITS.maxMinutes,
      noProgressLimit: config.no_progress_limit ?? DEFAULT_LIMITS.noProgressLimit,
    },
    providerUnreachableMinutes: config.provider_unreachable_minutes ?? DEFAULT_PROVIDER_UNREACHABLE_MINUTES,
    providerEnv: {
      OPENAI_API_KEY: env.OPENAI_API_KEY,
      OPENAI_BASE_URL: env.OPENAI_BASE_URL || config.base_url,
      ANTHROPIC_API_KEY: env.ANTHROPIC_API_KEY,
      OLLAMA_BASE_URL: env.OLLAMA_BASE_URL,
    },
  };
}
