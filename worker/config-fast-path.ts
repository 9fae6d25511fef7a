/**
 * Accepting a config file without zod: every key must be one of the plain keys below and pass its
 * check, which is never looser than the schema's (test/worker/config-fast-path.test.ts compares
 * them). Anything else (base_url, sandbox, an unknown key, a bad value) returns null, and the zod
 * schema (config-schema.ts) decides and words the error. Saves the light commands loading zod.
 */
import path from 'node:path';
import type { GoalrunConfig } from './config-schema';

type Check = (value: unknown) => boolean;

const nonEmptyString: Check = (value) => typeof value === 'string' && value.length > 0;
const positiveInt: Check = (value) => Number.isSafeInteger(value) && (value as number) > 0;
const percent: Check = (value) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 1 && value <= 100;
const boolean: Check = (value) => typeof value === 'boolean';

/** The keys the fast path checks by itself, each with the same rule as the schema. */
export const FAST_CONFIG_CHECKS: Readonly<Record<string, Check>> = {
  model: nonEmptyString,
  max_iterations: positiveInt,
  max_steps: positiveInt,
  max_minutes: positiveInt,
  no_progress_limit: positiveInt,
  max_cost_usd: (value) => typeof value === 'number' && Number.isFinite(value) && value > 0,
  max_tokens: positiveInt,
  budget_wait_minutes: positiveInt,
  quota_wait_minutes: positiveInt,
  temporal_address: nonEmptyString,
  temporal_http_address: (value) => typeof value === 'string' && isTemporalHttpAddress(value),
  temporal_namespace: nonEmptyString,
  task_queue: nonEmptyString,
  database_url: nonEmptyString,
  auto_compact_enabled: boolean,
  auto_compact_threshold_pct: percent,
  auto_compact_target_pct: percent,
  auto_compact_max_failures: positiveInt,
  context_window: positiveInt,
  summarizer_model: nonEmptyString,
  backup_model: nonEmptyString,
  failover_after_failures: positiveInt,
  failover_after_minutes: positiveInt,
  failover_cooldown_s: positiveInt,
  provider_unreachable_minutes: positiveInt,
  stream_idle_timeout_s: positiveInt,
  stalled_after_minutes: positiveInt,
  tools_queue: nonEmptyString,
  payload_keys_file: (value) => typeof value === 'string' && path.isAbsolute(value),
  trust_project: boolean,
  worktree: boolean,
  trust_project_mcp: boolean,
  api_key_env: (value) => typeof value === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(value),
  instructions_max_kib: positiveInt,
  snapshot_max_file_mib: positiveInt,
  snapshot_max_total_mib: positiveInt,
  verify_max_failures: positiveInt,
  verify_timeout_s: positiveInt,
};

/** The config, when the fast path can accept it as it is; null when the schema must decide. */
export function fastConfig(raw: unknown): GoalrunConfig | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  for (const [key, value] of Object.entries(raw)) {
    const check = Object.hasOwn(FAST_CONFIG_CHECKS, key) ? FAST_CONFIG_CHECKS[key] : undefined;
    if (!check?.(value)) return null;
  }
  return raw as GoalrunConfig;
}

/**
 * The base URL (`http://host:port[/path]`, no trailing slash) of a Temporal HTTP API address given
 * as `host:port` (with `scheme`: https when the connection uses TLS) or an http(s) URL; null when it
 * is neither.
 */
export function temporalHttpBaseUrl(address: string, scheme: 'http' | 'https' = 'http'): string | null {
  const trimmed = address.trim();
  if (trimmed === '') return null;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `${scheme}://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.hostname === '' || url.search || url.hash || url.username || url.password) return null;
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

/** Whether a value names a Temporal HTTP API (see {@link temporalHttpBaseUrl}). */
export function isTemporalHttpAddress(address: string): boolean {
  return temporalHttpBaseUrl(address) !== null;
}
