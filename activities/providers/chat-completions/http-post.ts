/**
 * One POST over node:http(s), with kept-alive connections. A model call goes this way rather than
 * through `fetch`: undici's fetch wraps every response in web streams, which cost a step more CPU
 * than the whole parse of its answer (docs/performance.md).
 */
import { Agent, type Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { APICallError } from '@ai-sdk/provider';
import { abortErrorFrom } from '../errors';

/**
 * How long a connection may take to open: a provider whose address drops packets fails then, as an
 * unreachable one (undici's default, which the AI SDK's fetch had), not after the kernel's two minutes.
 */
export const CONNECT_TIMEOUT_MS = 10_000;
/** The code of that failure: undici's, which errors.ts counts as unreachable. */
const CONNECT_TIMEOUT_CODE = 'UND_ERR_CONNECT_TIMEOUT';

/** Connections kept open for the next call, per process: every model call of a worker shares them. */
const httpAgent = new Agent({ keepAlive: true });
const httpsAgent = new HttpsAgent({ keepAlive: true });

/**
 * Sends `body` to `url` and resolves with the response once its headers arrived (any status). A
 * connection that cannot be made rejects with the AI SDK's "Cannot connect to API" APICallError,
 * the error goalrun has always classified (errors.ts); the signal rejects with an AbortError.
 */
export function postJson(
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortErrorFrom(signal));
      return;
    }
    const https = url.protocol === 'https:';
    const send = https ? httpsRequest : httpRequest;
    const agent: HttpAgent = https ? httpsAgent : httpAgent;
    const req = send(url, {
      method: 'POST',
      agent,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        // A compressed stream arrives in bursts, when the compressor flushes; ask for it plain.
        'accept-encoding': 'identity',
      },
    });
    const onAbort = () => {
      req.destroy();
      reject(abortErrorFrom(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    req.once('socket', (socket) => {
      // A kept-alive socket is connected already.
      if (!socket.connecting) return;
      const timer = setTimeout(() => {
        const error = new Error(`connect timed out after ${CONNECT_TIMEOUT_MS / 1000} s`);
        (error as NodeJS.ErrnoException).code = CONNECT_TIMEOUT_CODE;
        req.destroy(error);
      }, CONNECT_TIMEOUT_MS);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    req.once('response', (response) => {
      signal.removeEventListener('abort', onAbort);
      resolve(response);
    });
    // `on`, not `once`: a socket can report more than one error, and one without a listener would
    // crash the worker. Errors after the response are the response's to report (client.ts).
    req.on('error', (cause) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) reject(abortErrorFrom(signal));
      else {
        reject(
          new APICallError({
            message: `Cannot connect to API: ${cause.message}`,
            cause,
            url: url.toString(),
            requestBodyValues: undefined,
            isRetryable: true,
          }),
        );
      }
    });
    req.end(body);
  });
}

/**
 * The response's body as it was meant: a server that compresses it although asked not to (a proxy,
 * say) is read through the matching decompressor, as `fetch` would. Its errors become the body's.
 */
export function decodedBody(response: IncomingMessage): Readable {
  const coding = String(response.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    coding === 'gzip' || coding === 'x-gzip'
      ? createGunzip()
      : coding === 'deflate'
        ? createInflate()
        : coding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) return response;
  response.on('error', (err) => decoder.destroy(err));
  // A stream cut short must not end the decoder cleanly, as if the answer were whole.
  response.on('aborted', () => decoder.destroy(new Error('aborted')));
  return response.pipe(decoder);
}

/** The response's headers as one string per name, as `fetch` gives them (errors.ts reads Retry-After). */
export function headerRecord(response: IncomingMessage): Record<string, string> {
  const record: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) record[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return record;
}
