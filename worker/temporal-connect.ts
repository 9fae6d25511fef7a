/**
 * Connecting to Temporal with a process's connection settings (worker/temporal-connection.ts): the
 * CLI's gRPC client and the worker's native connection, each failure turned into its named cause
 * (worker/connection-errors.ts). The SDK packages load only when a connection is made.
 */

import { isIP } from 'node:net';
import type { Connection } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import {
  connectionProblem,
  explainedError,
  type ProbeResult,
  TemporalUnreachableError,
} from './connection-errors';
import { connectOptions, tlsMaterial } from './connection-options';
import type { TemporalConnectionSettings } from './temporal-connection';
import { hostAndPort, probeTls } from './tls-probe';

/** How long the gRPC client waits for the server (the SDK's default is 10 s, spent retrying a refusal). */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * grpc-js hands the host of the address to TLS as its server name, and Node warns (DEP0123) when that
 * is an IP address: the certificate is still checked against the IP. The warning is dropped, once.
 */
function quietIpServerNameWarning(settings: TemporalConnectionSettings): void {
  if (settings.tls === false || settings.tls.serverName || !isIP(hostAndPort(settings.address).host)) return;
  const emit = process.emitWarning;
  if ((emit as { goalrunQuiet?: boolean }).goalrunQuiet) return;
  const quiet = ((warning: string | Error, ...rest: unknown[]) => {
    const code = typeof rest[0] === 'object' && rest[0] ? (rest[0] as { code?: string }).code : rest[1];
    if (code === 'DEP0123') return;
    (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  (quiet as { goalrunQuiet?: boolean }).goalrunQuiet = true;
  process.emitWarning = quiet;
}

/** The error for a failed connection, after a handshake of goalrun's own has looked for the cause. */
export async function explainConnectionFailure(
  err: unknown,
  settings: TemporalConnectionSettings,
): Promise<Error> {
  let probe: ProbeResult | undefined;
  try {
    probe = await probeTls(settings.address, tlsMaterial(settings));
  } catch {
    probe = undefined;
  }
  return explainedError(err, settings, probe);
}

/**
 * With TLS on, a handshake of goalrun's own first: a certificate problem is named at once, where the
 * gRPC client would retry until its deadline and then not say why. Resolves when nothing is wrong.
 */
async function precheckTls(settings: TemporalConnectionSettings): Promise<void> {
  const material = tlsMaterial(settings);
  if (!material) return;
  const probe = await probeTls(settings.address, material);
  if (probe.kind === 'answered') return;
  if (connectionProblem(null, settings, probe)) throw explainedError(null, settings, probe);
}

/** The gRPC client's connection (the CLI), with failures named. */
export async function connectClient(
  settings: TemporalConnectionSettings,
  connectTimeoutMs: number = CONNECT_TIMEOUT_MS,
): Promise<Connection> {
  const options = connectOptions(settings);
  await precheckTls(settings);
  quietIpServerNameWarning(settings);
  const { Connection } = require('@temporalio/client') as typeof import('@temporalio/client');
  try {
    return await Connection.connect({ ...options, connectTimeout: connectTimeoutMs });
  } catch (err) {
    throw await explainConnectionFailure(err, settings);
  }
}

/**
 * The worker's native connection, with failures named. To a server on this machine it sends and
 * accepts no gzip: on loopback, compressing every task and completion costs CPU on both ends for
 * bytes that never cross a network (docs/performance.md, "gzip on loopback").
 */
export async function connectNative(settings: TemporalConnectionSettings): Promise<NativeConnection> {
  const options = {
    ...connectOptions(settings),
    ...(isLoopbackAddress(settings.address) ? { grpcCompression: { codec: 'none' as const } } : {}),
  };
  const { NativeConnection } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  try {
    return await NativeConnection.connect(options);
  } catch (err) {
    throw await explainConnectionFailure(err, settings);
  }
}

/** Whether a `host:port` names this machine: `localhost`, 127.0.0.0/8 or ::1. */
export function isLoopbackAddress(address: string): boolean {
  // hostAndPort has taken the brackets off an IPv6 address.
  const host = hostAndPort(address).host.toLowerCase();
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** Whether an error says only that no server answers (so a command may say "not running"). */
export function isUnreachable(err: unknown): boolean {
  return err instanceof TemporalUnreachableError;
}
