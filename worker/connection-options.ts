/**
 * What a connection's settings (worker/temporal-connection.ts) become when a process connects: the
 * certificate files read, the options of the SDK's two connections, and the words that describe the
 * settings to a person (the worker's start line, doctor) without ever showing the API key.
 */
import fs from 'node:fs';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { ConfigError } from '../core/errors';
import type { PemSource, TemporalConnectionSettings } from './temporal-connection';

/** The Connection / NativeConnection options of these settings (the files are read now). */
export interface TemporalConnectOptions {
  address: string;
  tls?: NativeConnectionOptions['tls'];
  apiKey?: string;
  metadata?: Record<string, string>;
}

/** A PEM file's or text's bytes; ConfigError naming the setting when the file cannot be read. */
function readPem(source: PemSource | undefined, origin: string | undefined): Buffer | undefined {
  if (!source) return undefined;
  if ('data' in source) return Buffer.from(source.data, 'utf8');
  try {
    return fs.readFileSync(source.path);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new ConfigError(`cannot read ${source.path} (${origin ?? 'a TLS setting'}): ${reason}`);
  }
}

/** The TLS material of the settings, read from its files: what both gRPC and HTTPS present. */
export interface TlsMaterial {
  serverName?: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/** Reads the certificate files (ConfigError naming the setting when one cannot be read); null without TLS. */
export function tlsMaterial(settings: TemporalConnectionSettings): TlsMaterial | null {
  if (settings.tls === false) return null;
  const { origins } = settings;
  return {
    serverName: settings.tls.serverName,
    ca: readPem(settings.tls.serverCa, origins.serverCa),
    cert: readPem(settings.tls.clientCert, origins.clientCert),
    key: readPem(settings.tls.clientKey, origins.clientKey),
  };
}

/** The options `Connection.connect` and `NativeConnection.connect` take for these settings. */
export function connectOptions(settings: TemporalConnectionSettings): TemporalConnectOptions {
  const material = tlsMaterial(settings);
  const tls: TemporalConnectOptions['tls'] = material
    ? {
        ...(material.serverName ? { serverNameOverride: material.serverName } : {}),
        ...(material.ca ? { serverRootCACertificate: material.ca } : {}),
        ...(material.cert && material.key
          ? { clientCertPair: { crt: material.cert, key: material.key } }
          : {}),
      }
    : undefined;
  return {
    address: settings.address,
    ...(tls ? { tls } : {}),
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    ...(settings.metadata ? { metadata: settings.metadata } : {}),
  };
}

/** A short description of how the connection is secured, for the lines a worker prints at start. */
export function securityText(settings: TemporalConnectionSettings): string {
  const parts: string[] = [];
  if (settings.tls === false) parts.push('plain');
  else parts.push(settings.tls.clientCert ? 'mTLS' : 'TLS');
  if (settings.apiKey) parts.push('API key');
  return parts.join(', ');
}

/** One line per setting with where it came from, for `goalrun doctor`; never the API key itself. */
export function describeConnectionSettings(settings: TemporalConnectionSettings): string {
  const { origins } = settings;
  const where = (value: string, origin: string | undefined) => `${value} (${origin ?? 'unknown'})`;
  const parts = [
    `address ${where(settings.address, origins.address)}`,
    `namespace ${where(settings.namespace, origins.namespace)}`,
  ];
  if (settings.tls === false) {
    parts.push(origins.tls ? `TLS off (${origins.tls})` : 'TLS off');
  } else {
    const sourceText = (source: PemSource | undefined, origin: string | undefined) =>
      source === undefined ? undefined : where('path' in source ? source.path : 'inline PEM', origin);
    // TLS turned on by one of its own settings is said once, at that setting.
    const byItsSettings = [origins.serverCa, origins.clientCert, origins.serverName].includes(origins.tls);
    const tlsParts = [byItsSettings ? 'TLS on' : `TLS on (${origins.tls})`];
    const ca = sourceText(settings.tls.serverCa, origins.serverCa);
    tlsParts.push(ca ? `server CA ${ca}` : "server CA: the system's roots");
    const cert = sourceText(settings.tls.clientCert, origins.clientCert);
    tlsParts.push(
      cert
        ? `client certificate ${cert}, key ${sourceText(settings.tls.clientKey, origins.clientKey)}`
        : 'no client certificate',
    );
    if (settings.tls.serverName)
      tlsParts.push(`server name ${where(settings.tls.serverName, origins.serverName)}`);
    parts.push(tlsParts.join(', '));
  }
  parts.push(settings.apiKey ? `API key set (${origins.apiKey})` : 'no API key');
  if (settings.profile) parts.push(`profile "${settings.profile.name}" of ${settings.profile.file}`);
  return parts.join('; ');
}
