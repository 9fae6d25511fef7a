/**
 * The backup model of a goal (issue 27 §3): `--backup-model` or config backup_model, where its
 * requests go (config backup_base_url, else the goal's base URL when it is of the same provider), and
 * the failover settings (config failover_*). Checked as the goal's model is, before anything starts.
 */
import { checkProviderConfig, normalizeModelSpec, parseModelSpec } from '../activities/providers/spec';
import { ConfigError } from '../core/errors';
import type { FailoverSettings } from '../core/failover';
import type { GoalDefinition } from '../core/goal';
import type { Settings } from '../worker/settings';
import { checkBaseUrl, type GoalOptions } from './goal-options';

/** The goal fields of the backup model; none when no backup is named. */
export function backupFields(
  options: Pick<GoalOptions, 'backupModel'>,
  settings: Settings,
  primary: { model: string; baseUrl?: string; apiKeyEnv?: string },
  hostsWorker: boolean,
): Pick<GoalDefinition, 'backupModel' | 'backupBaseUrl' | 'failover'> {
  const named = options.backupModel ?? settings.config.backup_model;
  if (!named) return {};
  const where = options.backupModel ? '--backup-model' : 'config backup_model';
  const backupModel = normalizeModelSpec(named);
  const backupProvider = parseModelSpec(backupModel).provider;
  const configured = settings.config.backup_base_url;
  checkBaseUrl(configured, 'config backup_base_url');
  // Another provider's base URL would send the backup's requests (and key) to the wrong host.
  const backupBaseUrl =
    configured ?? (parseModelSpec(primary.model).provider === backupProvider ? primary.baseUrl : undefined);
  if (backupModel === primary.model && backupBaseUrl === primary.baseUrl) {
    throw new ConfigError(
      `${where} ${backupModel} is the goal's own model at the same endpoint: a backup must be another model or endpoint`,
    );
  }
  if (hostsWorker || backupProvider === 'scripted') {
    checkProviderConfig(backupModel, settings.providerEnv, backupBaseUrl, primary.apiKeyEnv);
  }
  const failover: FailoverSettings = {
    ...(settings.config.failover_after_failures
      ? { afterFailures: settings.config.failover_after_failures }
      : {}),
    ...(settings.config.failover_after_minutes
      ? { afterMinutes: settings.config.failover_after_minutes }
      : {}),
    ...(settings.config.failover_cooldown_s ? { cooldownS: settings.config.failover_cooldown_s } : {}),
  };
  return {
    backupModel,
    ...(backupBaseUrl ? { backupBaseUrl } : {}),
    ...(Object.keys(failover).length > 0 ? { failover } : {}),
  };
}
