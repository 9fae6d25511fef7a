/**
 * Temporal's remote codec protocol over goalrun's payload keys (docs/security.md): `POST …/encode` and
 * `POST …/decode` take and return `{"payloads": [...]}` in protobuf's JSON form (bytes in base64). The
 * Web UI (and `temporal --codec-endpoint`) send their payloads here to show them decrypted; the keys
 * never leave this process. CORS answers the Web UI's origins with the `x-namespace`, `content-type`
 * and `authorization` headers; with a token, every call must carry `Authorization: Bearer <token>`.
 */
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  decryptPayload,
  encryptPayload,
  isEncryptedPayload,
  PayloadCodecError,
} from '../worker/payload-codec';
import type { PayloadKey } from '../worker/payload-keys';
import type { PlainPayload } from '../worker/payload-proto';

/** Where the codec server listens by default (Temporal's codec server samples use this port). */
export const DEFAULT_CODEC_PORT = 8888;
export const DEFAULT_CODEC_HOST = '127.0.0.1';
/** The Web UI of a dev server goalrun starts, and of docker-compose.yml. */
export const DEFAULT_CORS_ORIGINS = [
  'http://localhost:8233',
  'http://127.0.0.1:8233',
  'http://localhost:8080',
];
/** The largest request body taken: a page of history's payloads, with room to spare. */
export const MAX_CODEC_BODY_BYTES = 16 * 1024 * 1024;
const CORS_MAX_AGE_SECONDS = 600;

/** How a codec server is set up. */
export interface CodecServerOptions {
  host: string;
  port: number;
  /** The first encrypts; every one decrypts. */
  keys: readonly PayloadKey[];
  /** When set, calls must carry `Authorization: Bearer <token>`. */
  token?: string;
  /** Origins whose pages may call the server (`*`: any). */
  corsOrigins: readonly string[];
  /** Told of payloads it could not decrypt (key missing, damaged), one line each. */
  log?: (line: string) => void;
}

/** A running codec server. */
export interface CodecServer {
  /** `http://host:port`: what the Web UI's codec endpoint setting takes. */
  url: string;
  close(): Promise<void>;
}

/** A request the server refuses, with its HTTP status. */
class CodecRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type JsonPayload = { metadata?: Record<string, string>; data?: string };

function fromJson(payload: unknown, index: number): PlainPayload {
  const { metadata, data } = (payload ?? {}) as JsonPayload;
  if (typeof metadata !== 'object' || metadata === null || (data !== undefined && typeof data !== 'string')) {
    throw new CodecRequestError(400, `payloads[${index}] is not a payload ({metadata, data} in base64)`);
  }
  const entries = Object.entries(metadata).map(([key, value]) => {
    if (typeof value !== 'string')
      throw new CodecRequestError(400, `payloads[${index}].metadata.${key} is not base64`);
    return [key, Buffer.from(value, 'base64')] as const;
  });
  return { metadata: Object.fromEntries(entries), data: Buffer.from(data ?? '', 'base64') };
}

function toJson(payload: PlainPayload): JsonPayload {
  const metadata = Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([key, value]) => [
      key,
      Buffer.from(value).toString('base64'),
    ]),
  );
  return { metadata, data: Buffer.from(payload.data ?? []).toString('base64') };
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_CODEC_BODY_BYTES) {
        reject(new CodecRequestError(413, `the request is over ${MAX_CODEC_BODY_BYTES} bytes`));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const expected = Buffer.from(`Bearer ${token}`);
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The payloads of a request body, encoded or decoded. */
function transform(body: string, operation: 'encode' | 'decode', options: CodecServerOptions): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new CodecRequestError(400, 'the body is not JSON');
  }
  const payloads = (parsed as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(payloads)) throw new CodecRequestError(400, 'the body has no "payloads" list');
  return {
    payloads: payloads.map((item, index) => {
      const payload = fromJson(item, index);
      if (operation === 'encode') {
        return toJson(isEncryptedPayload(payload) ? payload : encryptPayload(payload, options.keys[0]));
      }
      try {
        return toJson(decryptPayload(payload, options.keys));
      } catch (err) {
        if (!(err instanceof PayloadCodecError)) throw err;
        // Shown encrypted, as without a codec server; the other payloads of the page still decode.
        options.log?.(err.message);
        return item;
      }
    }),
  };
}

/** Starts a codec server; resolves once it listens. */
export function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  if (options.keys.length === 0) throw new Error('a codec server needs at least one payload key');
  const corsHeaders = (origin: string | undefined): Record<string, string> => {
    if (!origin || !(options.corsOrigins.includes('*') || options.corsOrigins.includes(origin))) return {};
    return {
      'access-control-allow-origin': origin,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': 'x-namespace, content-type, authorization',
      'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
      vary: 'Origin',
    };
  };
  const server = http.createServer(async (request, response) => {
    const cors = corsHeaders(request.headers.origin);
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { ...cors, 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    try {
      if (request.method === 'OPTIONS') {
        response.writeHead(204, cors);
        response.end();
        return;
      }
      const path = new URL(request.url ?? '/', 'http://codec').pathname.replace(/\/+$/, '');
      const operation = path.endsWith('/encode') ? 'encode' : path.endsWith('/decode') ? 'decode' : null;
      if (!operation)
        throw new CodecRequestError(404, 'the codec endpoints are POST /encode and POST /decode');
      if (request.method !== 'POST') throw new CodecRequestError(405, `use POST for /${operation}`);
      if (options.token && !tokenMatches(request.headers.authorization, options.token)) {
        throw new CodecRequestError(401, 'a valid "Authorization: Bearer <token>" header is required');
      }
      send(200, transform(await readBody(request), operation, options));
    } catch (err) {
      const status = err instanceof CodecRequestError ? err.status : 500;
      send(status, { error: err instanceof Error ? err.message : String(err) });
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      // A failure while serving (out of file descriptors) is said, and the server goes on.
      server.on('error', (err) => options.log?.(`codec server: ${err.message}`));
      const { port } = server.address() as AddressInfo;
      const host = options.host.includes(':') ? `[${options.host}]` : options.host;
      resolve({
        url: `http://${host}:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // The Web UI keeps its connections alive; they must not hold the process open.
            server.closeAllConnections();
          }),
      });
    });
  });
}
