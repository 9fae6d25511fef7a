/**
 * The secret values this process knows: provider keys, database passwords, payload keys and the
 * Temporal API key. Tool outputs, transcripts and failure messages are scrubbed of them before
 * anything is stored, sent or printed.
 */
import { embeddedStorePassword } from '../store/open';
import { loadPayloadKeys } from './payload-keys';
import type { Settings } from './settings';

/** Values shorter than this are not treated as secrets: redacting them would mangle ordinary text. */
export const MIN_SECRET_CHARS = 8;

/** Every secret value of these settings (and of the embedded store under their data directory). */
export function knownSecrets(settings: Settings): string[] {
  const values = [
    settings.providerEnv.OPENAI_API_KEY,
    settings.providerEnv.ANTHROPIC_API_KEY,
    settings.providerEnv.OPENAI_COMPATIBLE_API_KEY,
    settings.config.api_key_env ? settings.providerEnv.lookup?.(settings.config.api_key_env) : undefined,
    passwordOf(settings.databaseUrl),
    // The config file's database URL is a secret even when DATABASE_URL overrides it: a tool can read the file.
    passwordOf(settings.config.database_url),
    settings.databaseUrl ? null : embeddedStorePassword(settings.home),
    ...payloadKeySecrets(settings),
    temporalApiKey(settings),
    // A webhook's signing secret and an ntfy token sit in the config file a tool could read.
    ...(settings.config.notify ?? []).map((target) =>
      target.type === 'webhook' ? target.secret : target.type === 'ntfy' ? target.token : undefined,
    ),
  ];
  return [...new Set(values.filter((value): value is string => !!value && value.length >= MIN_SECRET_CHARS))];
}

/** The password of a PostgreSQL URL, decoded, or null. */
export function passwordOf(databaseUrl: string | undefined): string | null {
  if (!databaseUrl) return null;
  try {
    const password = new URL(databaseUrl).password;
    return password ? decodeURIComponent(password) : null;
  } catch {
    // A key=value connection string: find password=… in it.
    return /(?:^|\s)password=(\S+)/.exec(databaseUrl)?.[1] ?? null;
  }
}

/** The payload encryption keys, as written in GOALRUN_PAYLOAD_KEYS or the keys file (base64). */
function payloadKeySecrets(settings: Settings): string[] {
  try {
    return loadPayloadKeys(process.env, settings.config.payload_keys_file).map((key) =>
      key.key.toString('base64'),
    );
  } catch {
    // A bad key setting is reported where the keys are used; the whole variable is redacted anyway.
    return [];
  }
}

/** The Temporal API key (TEMPORAL_API_KEY or the profile's api_key), or null. */
function temporalApiKey(settings: Settings): string | null {
  try {
    return settings.temporal.apiKey ?? null;
  } catch {
    // A bad temporal.toml is reported where Temporal is connected to; no key is read from it then.
    return null;
  }
}
