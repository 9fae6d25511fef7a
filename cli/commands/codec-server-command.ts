/** `goalrun codec-server`: Temporal's codec endpoints over this process's payload keys (docs/security.md). */
import { ConfigError } from '../../core/errors';
import { PAYLOAD_KEYS_HINT } from '../../worker/payload-codec';
import {
  DEFAULT_CODEC_HOST,
  DEFAULT_CODEC_PORT,
  DEFAULT_CORS_ORIGINS,
  startCodecServer,
} from '../codec-server';
import type { CliContext } from '../context';
import { notice } from '../output';

/** The variable that holds the codec server's token (a flag would show it in `ps`). */
export const CODEC_TOKEN_ENV = 'GOALRUN_CODEC_TOKEN';

/** The flags of `goalrun codec-server`. */
export interface CodecServerFlags {
  port?: string;
  host?: string;
  corsOrigin?: string[];
  token?: string;
}

function portOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_CODEC_PORT;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ConfigError(`--port ${value} is not a port number (0-65535; 0 picks a free one)`);
  }
  return port;
}

function originsOf(values: string[] | undefined): string[] {
  if (!values || values.length === 0) return DEFAULT_CORS_ORIGINS;
  return values
    .flatMap((value) => value.split(','))
    .map((value) => value.trim().replace(/\/+$/, ''))
    .filter((value) => value !== '')
    .map((origin) => {
      if (origin === '*') return origin;
      let parsed: URL | undefined;
      try {
        parsed = new URL(origin);
      } catch {
        parsed = undefined;
      }
      if (!parsed || parsed.origin !== origin) {
        throw new ConfigError(`--cors-origin ${origin} is not an origin like http://localhost:8233 (or *)`);
      }
      return origin;
    });
}

/** Serves /encode and /decode until SIGINT or SIGTERM. */
export async function codecServerCommand(context: CliContext, flags: CodecServerFlags): Promise<number> {
  const port = portOf(flags.port);
  const corsOrigins = originsOf(flags.corsOrigin);
  const keys = context.payloadKeys();
  if (keys.length === 0) {
    throw new ConfigError(`codec-server needs the payload keys: set ${PAYLOAD_KEYS_HINT}`);
  }
  const token = flags.token || process.env[CODEC_TOKEN_ENV] || undefined;
  const server = await startCodecServer({
    host: flags.host ?? DEFAULT_CODEC_HOST,
    port,
    keys,
    token,
    corsOrigins,
    log: (line) => notice(line),
  }).catch((err: Error) => {
    throw new ConfigError(
      `codec-server cannot listen on ${flags.host ?? DEFAULT_CODEC_HOST}:${port}: ${err.message}`,
    );
  });
  notice(
    `codec server on ${server.url} (POST /encode, /decode): encrypts with key "${keys[0].id}", decrypts with ${keys
      .map((key) => `"${key.id}"`)
      .join(
        ', ',
      )}; CORS for ${corsOrigins.join(', ')}; ${token ? 'a bearer token is required' : 'no token required'}`,
  );
  notice(
    `point the Web UI at it: temporal server start-dev --ui-codec-endpoint ${server.url} (or the UI's codec server setting)`,
  );
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
  });
  await server.close();
  notice('codec server stopped');
  return 0;
}
