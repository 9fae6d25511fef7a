/**
 * Where and how every goalrun process connects to Temporal: the CLI's client and its HTTP reads, the
 * worker, the retention schedule. It reads what every Temporal tool reads, through the SDK's own
 * `@temporalio/envconfig`: the `TEMPORAL_*` variables over a `temporal.toml` profile (`--profile`,
 * else `TEMPORAL_PROFILE`, else the file's `default`), then goalrun's config keys, then the defaults.
 * It remembers where each setting came from, so that doctor and every error can say which to fix; it
 * never says what the API key is.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ClientConfigProfile, ConfigDataSource } from '@temporalio/envconfig';
import { ConfigError } from '../core/errors';
import type { GoalrunConfig } from './config-schema';

/** Address goalrun connects to when nothing names one. */
export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';
export const DEFAULT_NAMESPACE = 'default';
/** The profile envconfig reads when none is named. */
const DEFAULT_PROFILE = 'default';

/** The settings envconfig reads from the environment, by what they set. */
export const TEMPORAL_ENV = {
  address: 'TEMPORAL_ADDRESS',
  namespace: 'TEMPORAL_NAMESPACE',
  apiKey: 'TEMPORAL_API_KEY',
  tls: 'TEMPORAL_TLS',
  clientCert: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  clientKey: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
  serverCa: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  serverName: 'TEMPORAL_TLS_SERVER_NAME',
  profile: 'TEMPORAL_PROFILE',
  configFile: 'TEMPORAL_CONFIG_FILE',
} as const;

/** The same settings' keys in a temporal.toml profile. */
const PROFILE_KEYS = {
  address: 'address',
  namespace: 'namespace',
  apiKey: 'api_key',
  tls: 'tls.disabled',
  clientCert: 'tls.client_cert_path',
  clientKey: 'tls.client_key_path',
  serverCa: 'tls.server_ca_cert_path',
  serverName: 'tls.server_name',
} as const;

/** A connection setting whose origin is remembered. */
export type ConnectionSetting = keyof typeof PROFILE_KEYS;

/** A certificate or key: a file, or PEM text given inline (`*_DATA`, `*_data`). */
export type PemSource = { path: string } | { data: string };

/** The profile that was read, if any. */
export interface ProfileInfo {
  name: string;
  file: string;
  /** Named by --profile or TEMPORAL_PROFILE (else it is the file's `default`, read when present). */
  named: boolean;
}

/** How a goalrun process connects to Temporal, and where each part of it came from. */
export interface TemporalConnectionSettings {
  address: string;
  namespace: string;
  /** Sent as a bearer token; never printed, logged, stored or passed on. */
  apiKey?: string;
  /** TLS on (with these files, each optional: no CA means the system's roots), or off. */
  tls: false | { serverName?: string; clientCert?: PemSource; clientKey?: PemSource; serverCa?: PemSource };
  /** Extra gRPC headers (`TEMPORAL_GRPC_META_*`, a profile's `grpc_meta`). */
  metadata?: Record<string, string>;
  profile: ProfileInfo | null;
  /** Where each setting that is set came from: a variable, a profile key, a config key, or `default`. */
  origins: Partial<Record<ConnectionSetting, string>>;
}

/** Where to look, besides the environment. */
export interface ResolveOptions {
  /** `--profile NAME`: wins over TEMPORAL_PROFILE. */
  profile?: string;
  /** goalrun's config file, named as the origin of its keys. */
  configPath?: string;
}

/** Where envconfig looks for temporal.toml: TEMPORAL_CONFIG_FILE, else the user's config directory. */
export function temporalConfigFile(env: NodeJS.ProcessEnv): string | null {
  if (env[TEMPORAL_ENV.configFile]) return env[TEMPORAL_ENV.configFile] as string;
  if (process.platform === 'win32')
    return env.APPDATA ? path.join(env.APPDATA, 'temporalio', 'temporal.toml') : null;
  if (process.platform === 'darwin') {
    return env.HOME
      ? path.join(env.HOME, 'Library', 'Application Support', 'temporalio', 'temporal.toml')
      : null;
  }
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'temporalio', 'temporal.toml');
  if (xdg) return null;
  return env.HOME ? path.join(env.HOME, '.config', 'temporalio', 'temporal.toml') : null;
}

/**
 * The environment envconfig reads, with empty TEMPORAL_* values left out: goalrun has always taken an
 * empty variable as unset, where envconfig would take an empty address or key.
 */
function envconfigEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (value === '' && name.startsWith('TEMPORAL_') && !name.startsWith('TEMPORAL_GRPC_META_')) continue;
    out[name] = value;
  }
  return out;
}

const envconfig = (): typeof import('@temporalio/envconfig') => require('@temporalio/envconfig');

/** The profile of the file alone (no variables), or null when there is none to read. */
function fileProfile(
  file: string | null,
  name: string | undefined,
  namedBy: string,
  env: Record<string, string>,
): ClientConfigProfile | null {
  if (file === null || !fs.existsSync(file)) {
    if (env[TEMPORAL_ENV.configFile]) {
      throw new ConfigError(
        `TEMPORAL_CONFIG_FILE names ${file}, which does not exist: fix the path, or unset it to use ~/.config/temporalio/temporal.toml`,
      );
    }
    if (name !== undefined) {
      throw new ConfigError(
        `${namedBy} names the profile "${name}", but there is no temporal.toml${file ? ` at ${file}` : ''}: create it (temporal config set --profile ${name} …), or unset ${namedBy}`,
      );
    }
    return null;
  }
  let profiles: Record<string, ClientConfigProfile> = {};
  try {
    // envconfig fails on a file without any profile (an empty one, say): that file simply has none.
    if (/\bprofile\b/.test(fs.readFileSync(file, 'utf8'))) {
      profiles = envconfig().loadClientConfig({
        configSource: { path: file },
        overrideEnvVars: env,
      }).profiles;
    }
  } catch (err) {
    throw new ConfigError(`${file} is not a valid temporal.toml: ${(err as Error).message}`);
  }
  const chosen = profiles[name ?? DEFAULT_PROFILE];
  if (chosen) return chosen;
  if (name === undefined) return null;
  const known = Object.keys(profiles);
  throw new ConfigError(
    `${namedBy} names the profile "${name}", which ${file} does not have (${known.length > 0 ? `it has ${known.map((each) => `"${each}"`).join(', ')}` : 'it has no profile'})`,
  );
}

/** Variables that make envconfig's answer more than an address and a namespace. */
const SECURED_CONNECTION_ENV = /^TEMPORAL_(API_KEY|TLS|GRPC_META_)/;

/**
 * Without a profile to read and without a TLS, key or header variable, envconfig's answer is the
 * address and namespace variables and nothing else (test/worker/temporal-connection.test.ts holds it
 * to that): those are taken as they are, so that the light commands of a plain local setup do not
 * load envconfig and its TOML parser (issue 10). Null when envconfig must decide.
 */
function plainProfile(vars: Record<string, string>): ClientConfigProfile | null {
  if (Object.keys(vars).some((name) => SECURED_CONNECTION_ENV.test(name))) return null;
  const profile: ClientConfigProfile = {};
  if (vars[TEMPORAL_ENV.address] !== undefined) profile.address = vars[TEMPORAL_ENV.address];
  if (vars[TEMPORAL_ENV.namespace] !== undefined) profile.namespace = vars[TEMPORAL_ENV.namespace];
  return profile;
}

/** A source as goalrun keeps it: a path, or PEM text. */
function pemSourceOf(source: ConfigDataSource | undefined): PemSource | undefined {
  if (!source) return undefined;
  if ('path' in source) return { path: source.path };
  return { data: typeof source.data === 'string' ? source.data : Buffer.from(source.data).toString('utf8') };
}

/**
 * The connection settings of this process. Reads temporal.toml (not the certificate files: those are
 * read when connecting). Throws ConfigError on a bad file, an unknown profile, or half a key pair.
 */
export function resolveTemporalConnection(
  env: NodeJS.ProcessEnv,
  config: GoalrunConfig,
  options: ResolveOptions = {},
): TemporalConnectionSettings {
  const vars = envconfigEnv(env);
  const namedBy = options.profile ? '--profile' : TEMPORAL_ENV.profile;
  const profileName = options.profile || vars[TEMPORAL_ENV.profile] || undefined;
  const file = temporalConfigFile(vars);
  const fromFile = fileProfile(file, profileName, namedBy, vars);
  // The SDK's own merge: each variable set wins over the profile's key.
  const merged: ClientConfigProfile = fromFile
    ? envconfig().loadClientConfigProfile({
        profile: profileName,
        configSource: { path: file as string },
        overrideEnvVars: vars,
      })
    : (plainProfile(vars) ??
      envconfig().loadClientConfigProfile({ disableFile: true, overrideEnvVars: vars }));
  const profile: ProfileInfo | null =
    fromFile && file
      ? { name: profileName ?? DEFAULT_PROFILE, file, named: profileName !== undefined }
      : null;

  const origins: Partial<Record<ConnectionSetting, string>> = {};
  const fileTls = fromFile?.tls;
  const inFile: Record<ConnectionSetting, unknown> = {
    address: fromFile?.address,
    namespace: fromFile?.namespace,
    apiKey: fromFile?.apiKey,
    tls: fileTls?.disabled,
    clientCert: fileTls?.clientCert,
    clientKey: fileTls?.clientKey,
    serverCa: fileTls?.serverCACert,
    serverName: fileTls?.serverName,
  };
  const originOf = (setting: ConnectionSetting): string | undefined => {
    const variable = TEMPORAL_ENV[setting];
    if (vars[variable] !== undefined) return variable;
    if (setting !== 'tls' && setting !== 'address' && setting !== 'namespace' && setting !== 'apiKey') {
      const dataVariable = variable.replace(/_PATH$/, '_DATA');
      if (vars[dataVariable] !== undefined) return dataVariable;
    }
    if (inFile[setting] !== undefined && profile)
      return `${PROFILE_KEYS[setting]} of profile "${profile.name}" in ${profile.file}`;
    return undefined;
  };
  const configOrigin = (key: string) => `${key} in ${options.configPath ?? 'config.json'}`;

  const address = merged.address ?? config.temporal_address ?? DEFAULT_TEMPORAL_ADDRESS;
  origins.address =
    originOf('address') ?? (config.temporal_address ? configOrigin('temporal_address') : 'default');
  const namespace = merged.namespace ?? config.temporal_namespace ?? DEFAULT_NAMESPACE;
  origins.namespace =
    originOf('namespace') ?? (config.temporal_namespace ? configOrigin('temporal_namespace') : 'default');
  const apiKey = merged.apiKey || undefined;
  if (apiKey) origins.apiKey = originOf('apiKey');

  // As envconfig's toClientOptions: TLS is on with a tls section (unless disabled) or with an API key.
  const tlsSection = merged.tls;
  const tlsOn = tlsSection ? tlsSection.disabled !== true : apiKey !== undefined;
  let tls: TemporalConnectionSettings['tls'] = false;
  if (tlsOn) {
    tls = {
      serverName: tlsSection?.serverName || undefined,
      clientCert: pemSourceOf(tlsSection?.clientCert),
      clientKey: pemSourceOf(tlsSection?.clientKey),
      serverCa: pemSourceOf(tlsSection?.serverCACert),
    };
    for (const setting of ['clientCert', 'clientKey', 'serverCa', 'serverName'] as const) {
      if (tls[setting] !== undefined) origins[setting] = originOf(setting);
    }
    // What turned TLS on: TEMPORAL_TLS or tls.disabled = false, else the first TLS setting, else the key.
    origins.tls =
      originOf('tls') ??
      origins.serverCa ??
      origins.clientCert ??
      origins.serverName ??
      (fileTls && profile ? `the tls section of profile "${profile.name}" in ${profile.file}` : undefined) ??
      `${origins.apiKey} (an API key turns TLS on)`;
    if ((tls.clientCert === undefined) !== (tls.clientKey === undefined)) {
      const [given, missing] = tls.clientCert
        ? (['clientCert', 'clientKey'] as const)
        : (['clientKey', 'clientCert'] as const);
      throw new ConfigError(
        `a client certificate needs both the certificate and its key: ${origins[given]} is set, but not ${TEMPORAL_ENV[missing]} (or ${PROFILE_KEYS[missing]} in the profile)`,
      );
    }
  } else if (tlsSection?.disabled) {
    origins.tls = originOf('tls');
  }
  const metadata = merged.grpcMeta && Object.keys(merged.grpcMeta).length > 0 ? merged.grpcMeta : undefined;
  return { address, namespace, apiKey, tls, metadata, profile, origins };
}

/**
 * Whether the connection carries credentials or TLS: goalrun then never starts a dev server for it
 * (a dev server has neither), and never sends it over plain HTTP.
 */
export function isSecured(settings: TemporalConnectionSettings): boolean {
  return settings.tls !== false || settings.apiKey !== undefined;
}
