/**
 * Turns `run`/`start`/`resume` options into a goal definition. Kept apart from goal-options.ts,
 * which `--help` loads, because checking a model loads the provider specs and the script schema.
 */

import fs from 'node:fs';
import { checkMcpConfigFile } from '../activities/extensions/extension-config';
import { unpricedReason } from '../activities/models/catalog';
import { outputSchemaProblem } from '../activities/output-schema';
import {
  checkProviderConfig,
  endpointKeyEnv,
  normalizeModelSpec,
  parseModelSpec,
} from '../activities/providers/spec';
import { ConfigError } from '../core/errors';
import type { GoalDefinition } from '../core/goal';
import { APPENDED_PROMPT_MAX_CHARS, MAX_OBJECTIVE_CHARS, OUTPUT_SCHEMA_MAX_BYTES } from '../core/limits';
import type { BreakerSettings } from '../core/runaway-breaker';
import { parseToolRules } from '../core/tool-rules';
import { checksProblem, mergeChecks } from '../core/verify';
import type { Settings } from '../worker/settings';
import { backupFields } from './backup-model';
import {
  checkBaseUrl,
  extensionSourcesFromOptions,
  type GoalOptions,
  limitsFromFlags,
  positiveIntFlag,
  resolveWorkspace,
  sandboxFromOptions,
} from './goal-options';

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
  if (objective.trim().length > MAX_OBJECTIVE_CHARS) {
    throw new ConfigError(
      `the objective has ${objective.trim().length} characters; at most ${MAX_OBJECTIVE_CHARS} are accepted. Put the long brief in a file in the workspace and name it in the objective`,
    );
  }
  // Flags first: a typo in a number is the cheapest thing to report.
  const limits = { ...settings.defaultLimits, ...limitsFromFlags(options) };
  const toolTaskQueue = options.toolsQueue ?? settings.config.tools_queue;
  const workspace = resolveWorkspace(options.workspace, toolTaskQueue !== undefined);
  const model = normalizeModelSpec(options.model ?? settings.defaultModel);
  const baseUrl = options.baseUrl ?? settings.config.base_url;
  checkBaseUrl(baseUrl, options.baseUrl ? '--base-url' : 'config base_url');
  const sandbox = sandboxFromOptions(options, settings);
  const extensions = extensionSourcesFromOptions(options, settings, toolTaskQueue !== undefined, (file) =>
    checkMcpConfigFile(file, workspace, sandbox),
  );
  const apiKeyEnv = options.apiKeyEnv ?? settings.config.api_key_env;
  // Keys are checked only where the model calls happen: a remote worker has its own environment.
  // Which variable an endpoint's key comes from is checked everywhere: naming OPENAI_API_KEY for
  // another host is refused before anything starts.
  if (hostsWorker || parseModelSpec(model).provider === 'scripted') {
    checkProviderConfig(model, settings.providerEnv, baseUrl, apiKeyEnv);
  } else if (parseModelSpec(model).provider === 'openai-compatible' && baseUrl && apiKeyEnv) {
    endpointKeyEnv(baseUrl, apiKeyEnv, model);
  }
  const summarizerModel = settings.config.summarizer_model
    ? normalizeModelSpec(settings.config.summarizer_model)
    : undefined;
  const backup = backupFields(options, settings, { model, baseUrl, apiKeyEnv }, hostsWorker);
  if (limits.maxCostUsd !== undefined) {
    // Every model the goal may call is counted at its card's prices: each needs them.
    const models = [model, summarizerModel, backup.backupModel];
    for (const priced of new Set(models.filter((spec): spec is string => !!spec)))
      checkPricedCard(priced, settings.home);
  }
  return {
    sessionId,
    objective: objective.trim(),
    workspace,
    model,
    baseUrl,
    ...(apiKeyEnv ? { apiKeyEnv } : {}),
    limits,
    autoCompact: {
      enabled: settings.config.auto_compact_enabled,
      thresholdPct: settings.config.auto_compact_threshold_pct,
      targetPct: settings.config.auto_compact_target_pct,
      maxFailures: settings.config.auto_compact_max_failures,
    },
    contextWindowTokens:
      positiveIntFlag(options.contextWindow, '--context-window') ?? settings.config.context_window,
    ...backup,
    providerUnreachableMinutes: settings.providerUnreachableMinutes,
    streamIdleTimeoutS:
      positiveIntFlag(options.streamIdleTimeout, '--stream-idle-timeout') ??
      settings.config.stream_idle_timeout_s,
    sandbox,
    toolTaskQueue,
    summarizerModel,
    ...(extensions ? { extensions } : {}),
    ...headlessFields(options),
    ...(settings.config.breaker ? { breaker: breakerFromConfig(settings.config.breaker) } : {}),
    ...(settings.config.budget_wait_minutes
      ? { budgetWaitMinutes: settings.config.budget_wait_minutes }
      : {}),
    ...(settings.config.quota_wait_minutes ? { quotaWaitMinutes: settings.config.quota_wait_minutes } : {}),
    ...(settings.config.stalled_after_minutes
      ? { stalledAfterMinutes: settings.config.stalled_after_minutes }
      : {}),
    ...snapshotFields(settings.config),
    // How many, never where: the targets' URLs and secrets stay in the worker's config.
    ...(settings.config.notify?.length ? { notifyTargets: settings.config.notify.length } : {}),
    ...verifyFields(options, settings.config),
  };
}

/**
 * The goal's checks: config `verify` (the project's additions merged in by the settings), then
 * `--verify`; with the config's failed-finish limit and check timeout; the sign-off criteria
 * (config `sign_off`, `--sign-off`). Nothing without either.
 */
function verifyFields(options: GoalOptions, config: Settings['config']): Pick<GoalDefinition, 'verify'> {
  const blank = (options.verify ?? []).find((command) => command.trim() === '');
  if (blank !== undefined) throw new ConfigError('--verify needs a command, e.g. --verify "npm test"');
  if ((options.signOff ?? []).some((criterion) => criterion.trim() === '')) {
    throw new ConfigError('--sign-off needs a criterion, e.g. --sign-off "the page looks right"');
  }
  const checks = mergeChecks(config.verify, options.verify);
  const signOff = mergeChecks(config.sign_off, options.signOff);
  if (checks.length === 0 && signOff.length === 0) return {};
  const problem = checksProblem(checks) ?? checksProblem(signOff);
  if (problem) throw new ConfigError(`--verify / --sign-off / config verify, sign_off: ${problem}`);
  return {
    verify: {
      checks,
      ...(signOff.length > 0 ? { signOff } : {}),
      ...(config.verify_max_failures ? { maxFailures: config.verify_max_failures } : {}),
      ...(config.verify_timeout_s ? { timeoutS: config.verify_timeout_s } : {}),
    },
  };
}

/**
 * A money cap needs prices: a model whose card has none (no card at all, or a card without prices) is
 * refused before the goal starts, naming where a card goes.
 */
export function checkPricedCard(model: string, home: string): void {
  const problem = unpricedReason(model, home);
  if (problem)
    throw new ConfigError(`a money cap (--max-cost-usd or config max_cost_usd) needs prices, and ${problem}`);
}

/** The snapshot caps of the config (snapshot_max_*_mib), as the goal carries them (only those set). */
function snapshotFields(config: Settings['config']): Pick<GoalDefinition, 'snapshots'> {
  const { snapshot_max_file_mib: maxFileMib, snapshot_max_total_mib: maxTotalMib } = config;
  if (maxFileMib === undefined && maxTotalMib === undefined) return {};
  return { snapshots: { ...(maxFileMib ? { maxFileMib } : {}), ...(maxTotalMib ? { maxTotalMib } : {}) } };
}

/** The config's `breaker` section as the goal carries it (only the keys it sets). */
function breakerFromConfig(config: NonNullable<Settings['config']['breaker']>): Partial<BreakerSettings> {
  return {
    ...(config.repeat_limit !== undefined ? { repeatLimit: config.repeat_limit } : {}),
    ...(config.wait_limit !== undefined ? { waitLimit: config.wait_limit } : {}),
    ...(config.idle_turns !== undefined ? { idleTurns: config.idle_turns } : {}),
    ...(config.max_usd_per_minute !== undefined ? { maxUsdPerMinute: config.max_usd_per_minute } : {}),
    ...(config.max_tokens_per_minute !== undefined
      ? { maxTokensPerMinute: config.max_tokens_per_minute }
      : {}),
    ...(config.window_seconds !== undefined ? { windowMs: config.window_seconds * 1000 } : {}),
  };
}

/** The goal fields of the headless options: the appended prompt and the tool rules, checked. */
function headlessFields(
  options: GoalOptions,
): Pick<GoalDefinition, 'appendSystemPrompt' | 'toolRules' | 'outputSchema'> {
  const outputSchema = options.outputSchema ? readOutputSchema(options.outputSchema) : undefined;
  const appended = options.appendSystemPrompt?.trim();
  if (appended !== undefined && appended.length > APPENDED_PROMPT_MAX_CHARS) {
    throw new ConfigError(
      `--append-system-prompt has ${appended.length} characters; at most ${APPENDED_PROMPT_MAX_CHARS} are accepted`,
    );
  }
  const allowed = options.allowedTools ? parseToolRules('--allowed-tools', options.allowedTools) : undefined;
  const disallowed = options.disallowedTools
    ? parseToolRules('--disallowed-tools', options.disallowedTools)
    : undefined;
  return {
    ...(appended ? { appendSystemPrompt: appended } : {}),
    ...(outputSchema ? { outputSchema } : {}),
    ...(allowed || disallowed
      ? { toolRules: { ...(allowed ? { allowed } : {}), ...(disallowed ? { disallowed } : {}) } }
      : {}),
  };
}

/** The JSON Schema of --output-schema: read, size-capped (it travels in the goal), and compiled once to check it. */
function readOutputSchema(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`--output-schema: cannot read ${file}: ${(err as Error).message}`);
  }
  if (Buffer.byteLength(text) > OUTPUT_SCHEMA_MAX_BYTES) {
    throw new ConfigError(
      `--output-schema: ${file} has ${Buffer.byteLength(text)} bytes; at most ${OUTPUT_SCHEMA_MAX_BYTES} are accepted`,
    );
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`--output-schema: ${file} is not JSON: ${(err as Error).message}`);
  }
  const problem = outputSchemaProblem(schema);
  if (problem) throw new ConfigError(`--output-schema: ${file} is not a usable JSON Schema: ${problem}`);
  return schema as Record<string, unknown>;
}
