/** The options shared by `run`, `start` and `demo`: parsed, validated, turned into a goal. */
import fs from 'node:fs';
import path from 'node:path';
import { Option } from 'commander';
import { checkProviderConfig, normalizeModelSpec, parseModelSpec } from '../activities/providers/spec';
import { ConfigError } from '../core/errors';
import type { GoalDefinition, GoalLimits } from '../core/goal';
import {
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_MINUTES,
  DEFAULT_MAX_STEPS,
  DEFAULT_MODEL,
} from '../core/limits';
import type { Settings } from '../worker/settings';

/** Raw goal options as commander hands them over. */
export interface GoalOptions {
  workspace?: string;
  model?: string;
  baseUrl?: string;
  maxIterations?: string;
  maxSteps?: string;
  maxMinutes?: string;
  contextWindow?: string;
  worker?: boolean;
  json?: boolean;
}

/** The commander options for a goal, in one place so `run`, `start` and `resume` agree. */
export function goalOptionList(): Option[] {
  return [
    new Option('-w, --workspace <dir>', 'directory the agent works in (default: the current directory)'),
    new Option(
      '-m, --model <spec>',
      `model: openai:<m>, anthropic:<m>, ollama:<m>, openai-compatible:<m>, scripted:<file> (default: ${DEFAULT_MODEL}, or GOALRUN_MODEL / config model)`,
    ),
    new Option('--base-url <url>', 'base URL of an OpenAI-compatible endpoint (or OPENAI_BASE_URL)'),
    new Option('--context-window <tokens>', "the model's context window, overriding its model card"),
    ...limitOptionList(),
  ];
}

/** The limit options (also accepted by `resume`). */
export function limitOptionList(): Option[] {
  return [
    // Defaults in the text only: a commander default would look like a flag and override the config.
    new Option(
      '--max-iterations <n>',
      `stop after this many agent turns (limit_reached; default: ${DEFAULT_MAX_ITERATIONS}, or config max_iterations)`,
    ),
    new Option(
      '--max-steps <n>',
      `stop after this many model calls (limit_reached; default: ${DEFAULT_MAX_STEPS}, or config max_steps)`,
    ),
    new Option(
      '--max-minutes <n>',
      `stop after this much wall-clock time (limit_reached; default: ${DEFAULT_MAX_MINUTES}, or config max_minutes)`,
    ),
  ];
}

/** A positive integer from a flag, or a ConfigError naming the flag. */
export function positiveIntFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim()) || Number(value) <= 0) {
    throw new ConfigError(`${flag} must be a positive whole number, got "${value}"`);
  }
  return Number(value);
}

/** Limit overrides given on the command line. */
export function limitsFromFlags(options: GoalOptions): Partial<GoalLimits> {
  const limits: Partial<GoalLimits> = {};
  const iterations = positiveIntFlag(options.maxIterations, '--max-iterations');
  const steps = positiveIntFlag(options.maxSteps, '--max-steps');
  const minutes = positiveIntFlag(options.maxMinutes, '--max-minutes');
  if (iterations !== undefined) limits.maxIterations = iterations;
  if (steps !== undefined) limits.maxSteps = steps;
  if (minutes !== undefined) limits.maxMinutes = minutes;
  return limits;
}

/** Resolves and checks the workspace directory. */
export function resolveWorkspace(dir: string | undefined): string {
  const workspace = path.resolve(dir ?? process.cwd());
  let stat: fs.Stats;
  try {
    stat = fs.statSync(workspace);
  } catch {
    throw new ConfigError(`workspace ${workspace} does not exist`);
  }
  if (!stat.isDirectory()) throw new ConfigError(`workspace ${workspace} is not a directory`);
  return workspace;
}

/**
 * Builds the goal definition from the options. With `hostsWorker`, the model's key and base URL
 * must be here too, because this process will make the model calls.
 */
export function goalFromOptions(
  objective: string,
  options: GoalOptions,
  settings: Settings,
  sessionId: string,
  hostsWorker: boolean,
): GoalDefinition {
  if (objective.trim() === '') {
    throw new ConfigError('the objective is empty; say what the goal should achieve');
  }
  // Flags first: a typo in a number is the cheapest thing to report.
  const limits = { ...settings.defaultLimits, ...limitsFromFlags(options) };
  const workspace = resolveWorkspace(options.workspace);
  const model = normalizeModelSpec(options.model ?? settings.defaultModel);
  const baseUrl = options.baseUrl ?? settings.config.base_url;
  // Keys are checked only where the model calls happen: a remote worker has its own environment.
  if (hostsWorker || parseModelSpec(model).provider === 'scripted') {
    checkProviderConfig(model, settings.providerEnv, baseUrl);
  }
  return {
    sessionId,
    objective: objective.trim(),
    workspace,
    model,
    baseUrl,
    limits,
    autoCompact: {
      enabled: settings.config.auto_compact_enabled,
      thresholdPct: settings.config.auto_compact_threshold_pct,
      maxFailures: settings.config.auto_compact_max_failures,
    },
    contextWindowTokens:
      positiveIntFlag(options.contextWindow, '--context-window') ?? settings.config.context_window,
    backupModel: settings.config.backup_model ? normalizeModelSpec(settings.config.backup_model) : undefined,
    providerUnreachableMinutes: settings.providerUnreachableMinutes,
    summarizerModel: settings.config.summarizer_model
      ? normalizeModelSpec(settings.config.summarizer_model)
      : undefined,
  };
}
