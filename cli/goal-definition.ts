/**
 * Turns `run`/`start`/`resume` options into a goal definition. Kept apart from goal-options.ts,
 * which `--help` loads, because checking a model loads the provider specs and the script schema.
 */

import { readMcpConfigFile } from '../activities/extensions/extension-config';
import { checkProviderConfig, normalizeModelSpec, parseModelSpec } from '../activities/providers/spec';
import { ConfigError } from '../core/errors';
import type { GoalDefinition } from '../core/goal';
import { MAX_OBJECTIVE_CHARS } from '../core/limits';
import type { Settings } from '../worker/settings';
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
  const extensions = extensionSourcesFromOptions(
    options,
    settings,
    toolTaskQueue !== undefined,
    readMcpConfigFile,
  );
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
      targetPct: settings.config.auto_compact_target_pct,
      maxFailures: settings.config.auto_compact_max_failures,
    },
    contextWindowTokens:
      positiveIntFlag(options.contextWindow, '--context-window') ?? settings.config.context_window,
    backupModel: settings.config.backup_model ? normalizeModelSpec(settings.config.backup_model) : undefined,
    providerUnreachableMinutes: settings.providerUnreachableMinutes,
    streamIdleTimeoutS:
      positiveIntFlag(options.streamIdleTimeout, '--stream-idle-timeout') ??
      settings.config.stream_idle_timeout_s,
    sandbox,
    toolTaskQueue,
    summarizerModel: settings.config.summarizer_model
      ? normalizeModelSpec(settings.config.summarizer_model)
      : undefined,
    ...(extensions ? { extensions } : {}),
  };
}
