/**
 * goalrun's own client for a streamed Chat Completions endpoint (`openai-compatible:` and
 * `ollama:` models): node:http, its own SSE and chunk reading, no web streams and no per-chunk
 * schema. It behaves as the AI SDK client it replaces for these providers, the same request body
 * and the same failures (errors.ts), at a third of its CPU per call (docs/performance.md).
 * `openai:` and `anthropic:` models keep the AI SDK (ai-sdk-client.ts).
 */
import type { IncomingMessage } from 'node:http';
import { APICallError } from '@ai-sdk/provider';
import { abortErrorFrom, type FailureContext } from '../errors';
import { buildPrompt } from '../prompt';
import { providerCall } from '../provider-call';
import { type ByteListener, currentByteListener } from '../stream-idle';
import type { ModelClient, ModelRequest, ModelResponse } from '../types';
import { AnswerReader } from './answer-reader';
import { decodedBody, headerRecord, postJson } from './http-post';
import { chatCompletionsBody } from './request-body';
import { SseEvents } from './sse-events';

/** Most of an error body kept (errors.ts scans its first 4,000 characters); the rest is dropped. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** The path of the endpoint under the base URL, as the OpenAI SDKs append it. */
const CHAT_COMPLETIONS_PATH = '/chat/completions';

/** Where the endpoint is and its key; the key goes to this endpoint only (spec.ts decided which). */
export interface ChatEndpoint {
  baseUrl: string;
  apiKey?: string;
}

/** A ModelClient for one model of a Chat Completions endpoint. */
export function createChatCompletionsClient(
  spec: string,
  model: string,
  endpoint: ChatEndpoint,
  context: FailureContext,
): ModelClient {
  const headers: Record<string, string> = { 'user-agent': 'goalrun' };
  if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
  const url = `${endpoint.baseUrl.replace(/\/+$/, '')}${CHAT_COMPLETIONS_PATH}`;
  // Built inside the call, so that a prompt that cannot be sent fails as the call would.
  const bodyOf = (request: ModelRequest) =>
    JSON.stringify(
      chatCompletionsBody(
        model,
        buildPrompt(request.system, request.messages, { tail: request.tail, images: request.images }),
        request.tools,
      ),
    );
  return {
    spec,
    stream: (request: ModelRequest) =>
      providerCall(request, context, (signal) =>
        exchange(new URL(url), headers, bodyOf(request), signal, request),
      ),
  };
}

async function exchange(
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  request: ModelRequest,
): Promise<ModelResponse> {
  const onBytes = currentByteListener();
  const response = await postJson(url, headers, body, signal);
  // Whatever reads the body reports its errors; this keeps a late second one from crashing the worker.
  response.on('error', () => undefined);
  onBytes?.(false);
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    const onAbort = () => response.destroy();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      throw await errorOf(response, url, signal, onBytes);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
  return readAnswer(response, signal, onBytes, request);
}

/** Reads the answer's events as they arrive; settles once, on the end, a failure or the signal. */
function readAnswer(
  response: IncomingMessage,
  signal: AbortSignal,
  onBytes: ByteListener | undefined,
  request: ModelRequest,
): Promise<ModelResponse> {
  return new Promise((resolve, reject) => {
    const reader = new AnswerReader(request);
    const events = new SseEvents((data) => reader.event(data));
    let settled = false;
    const settle = (outcome: () => ModelResponse) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      try {
        resolve(outcome());
      } catch (err) {
        // After an error event, stop the response instead of leaving the connection to drain.
        response.destroy();
        reject(err);
      }
    };
    const fail = (err: unknown) =>
      settle(() => {
        throw err;
      });
    const onAbort = () => fail(abortErrorFrom(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    const body = decodedBody(response);
    body.setEncoding('utf8');
    body.on('data', (text: string) => {
      if (settled) return;
      onBytes?.(true);
      try {
        events.push(text);
      } catch (err) {
        fail(err);
      }
    });
    body.once('end', () =>
      settle(() => {
        events.end();
        return reader.response();
      }),
    );
    body.on('error', (err) => fail(brokenStream(err)));
    response.once('close', () => {
      if (!response.complete) fail(brokenStream(new Error('the connection closed before the answer ended')));
    });
  });
}

/** A response cut off mid-answer: a network error (errors.ts), whatever the socket said. */
function brokenStream(cause: Error): Error {
  const error = new Error(`the answer broke off: ${cause.message}`, { cause });
  (error as NodeJS.ErrnoException).code = 'ECONNRESET';
  return error;
}

/**
 * The error of a non-2xx answer, as the AI SDK makes it: an APICallError with the status, the
 * headers, the body and the message from an OpenAI-style `{"error": {"message"}}`, else the status text.
 */
async function errorOf(
  response: IncomingMessage,
  url: URL,
  signal: AbortSignal,
  onBytes: ByteListener | undefined,
): Promise<APICallError> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of decodedBody(response) as AsyncIterable<Buffer>) {
      if (signal.aborted) throw abortErrorFrom(signal);
      onBytes?.(false);
      if (size < MAX_ERROR_BODY_BYTES) chunks.push(chunk);
      size += chunk.length;
    }
  } catch (err) {
    if (signal.aborted) throw abortErrorFrom(signal);
    // A body that broke off still leaves the status, which says what happened.
    void err;
  }
  const responseBody = Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY_BYTES).toString('utf8');
  return new APICallError({
    message: errorMessageOf(responseBody) ?? response.statusMessage ?? '',
    url: url.toString(),
    requestBodyValues: undefined,
    statusCode: response.statusCode,
    responseHeaders: headerRecord(response),
    responseBody,
  });
}

function errorMessageOf(body: string): string | undefined {
  if (body.trim() === '') return undefined;
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } } | null)?.error?.message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}
