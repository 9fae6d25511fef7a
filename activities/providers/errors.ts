import { STATUS_CODES } from 'node:http';
import { APICallError } from '@ai-sdk/provider';
import { ApplicationFailure } from '@temporalio/common';
import { ConfigError, FailureType, type FailureTypeName } from '../../core/errors';
import { quotaOf } from '../../core/quota';
import { clip } from '../../core/text';
import { parseRetryAfter } from './retry-after';

/** Who failed, for the failure message. `secrets` are scrubbed from any provider text we quote. */
export interface FailureContext {
  provider: string;
  model: string;
  secrets?: string[];
}

/** Longest provider message quoted in a failure; error bodies can be whole HTML pages. */
const MAX_QUOTED_CHARS = 300;
/** How much of an error body is searched for a context-length complaint. */
const MAX_SCANNED_BODY_CHARS = 4_000;
/**
 * Upper bound on a provider's Retry-After. Temporal waits exactly `nextRetryDelay`, and a provider
 * that answers "retry in a day" (exhausted quota) would otherwise park the goal silently for that
 * long; an hour keeps it visibly retrying while still honouring any ordinary back-off.
 */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;

/** Statuses that a later retry can fix: timeout, conflict, rate limit. 5xx is checked separately. */
const RETRYABLE_STATUSES = new Set([408, 409, 429]);
const AUTH_STATUSES = new Set([401, 403]);
/** Statuses on which a context-length complaint is believed (other statuses mention tokens too: 429 TPM). */
const CONTEXT_STATUSES = new Set([400, 413]);

/** Phrases providers use for "the prompt does not fit the context window". */
const CONTEXT_OVERFLOW_PATTERN =
  /context[ _-]?length|maximum context|context_length_exceeded|context window|prompt is too long|too many tokens|maximum number of tokens/i;

/** Error codes of a refused, reset or timed-out connection, anywhere in an error's cause chain. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);
/** The codes that mean the server could not be reached at all (not a connection that broke later). */
const UNREACHABLE_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const NETWORK_ERROR_PATTERN =
  /fetch failed|failed to fetch|cannot connect to api|ECONNREFUSED|ECONNRESET|socket hang up|other side closed|terminated/i;

/** AI SDK errors that mean our request can never succeed as built. */
const BAD_REQUEST_ERROR_NAMES = new Set([
  'AI_UnsupportedFunctionalityError',
  'AI_InvalidPromptError',
  'AI_InvalidArgumentError',
]);
/** AI SDK errors that mean goalrun is misconfigured. */
const CONFIG_ERROR_NAMES = new Set(['AI_LoadAPIKeyError', 'AI_LoadSettingError', 'AI_NoSuchModelError']);

/** Longest cause chain followed when looking for a network error. */
const MAX_CAUSE_DEPTH = 8;

/**
 * Maps whatever a provider call threw to the ApplicationFailure the activity must throw, with the
 * failure type (core/errors.ts) that the retry policy and the workflow act on. An abort is not a
 * failure: it is rethrown unchanged so Temporal records a cancellation. Use as
 * `throw toActivityFailure(err, context)`.
 */
export function toActivityFailure(err: unknown, context: FailureContext): ApplicationFailure {
  if (isAbortError(err)) throw err;
  if (err instanceof ApplicationFailure) return err;
  const where = `${context.provider} model ${context.model}`;
  const quote = (text: string) => quoteProviderText(text, context.secrets);

  if (err instanceof ConfigError) {
    return failure(FailureType.ConfigError, `${where}: ${quote(err.message)}`);
  }
  if (APICallError.isInstance(err)) return fromApiCallError(err, where, quote);
  if (isNetworkError(err)) {
    return failure(FailureType.ProviderUnavailable, `${where}: network error: ${quote(errorText(err))}`);
  }

  const name = err instanceof Error ? err.name : '';
  const text = errorText(err);
  if (CONFIG_ERROR_NAMES.has(name)) return failure(FailureType.ConfigError, `${where}: ${quote(text)}`);
  if (BAD_REQUEST_ERROR_NAMES.has(name)) {
    return failure(FailureType.ProviderBadRequest, `${where}: request rejected: ${quote(text)}`);
  }
  if (CONTEXT_OVERFLOW_PATTERN.test(text)) {
    return failure(FailureType.ContextOverflow, `${where}: context window exceeded: ${quote(text)}`);
  }
  // What is left: an error part in the middle of a stream (the provider failed mid-answer), a
  // malformed or truncated response, or something unforeseen. A retry is the right first answer to
  // all of them; the activity's attempt limit bounds a fault that does not go away.
  const label = err instanceof Error ? `${name || 'Error'}: ` : 'stream error: ';
  return failure(FailureType.ProviderUnavailable, `${where}: ${label}${quote(text)}`);
}

/** True for the errors an aborted signal produces (the activity was cancelled): never retry those. */
export function isAbortError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const name = (err as { name?: unknown }).name;
  return name === 'AbortError' || name === 'CancelledFailure';
}

/**
 * The error to reject with once `signal` has fired: always named `AbortError` (which Temporal
 * reports as a cancellation), with the signal's reason, if any other, kept as its cause.
 */
export function abortErrorFrom(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const error = new Error('the model request was aborted', { cause: reason });
  error.name = 'AbortError';
  return error;
}

/** Removes API keys and bearer tokens from provider text before it goes into a failure message. */
export function redactSecrets(text: string, secrets: string[] = []): string {
  let redacted = text;
  for (const secret of secrets) {
    // Short values would redact ordinary words; real keys are long.
    if (secret.length >= 8) redacted = redacted.split(secret).join('[redacted]');
  }
  return redacted
    .replace(/\b(sk|rk|pk)-[A-Za-z0-9_*.-]{6,}/g, '$1-[redacted]')
    .replace(/\bBearer\s+[^\s"',]+/gi, 'Bearer [redacted]')
    .replace(/\b(x-api-key|api[_-]?key)(["']?\s*[:=]\s*["']?)[^\s"',]+/gi, '$1$2[redacted]');
}

function fromApiCallError(
  err: APICallError,
  where: string,
  quote: (text: string) => string,
): ApplicationFailure {
  const status = err.statusCode;
  if (status === undefined) {
    // No HTTP status: the SDK could not reach the server (it says "Cannot connect to API: ...").
    return failure(FailureType.ProviderUnavailable, `${where}: network error: ${quote(err.message)}`);
  }
  const statusText = STATUS_CODES[status];
  const head = `${where}: HTTP ${status}${statusText ? ` ${statusText}` : ''}`;
  const message = err.message && err.message !== statusText ? `${head}: ${quote(err.message)}` : head;

  if (status >= 300 && status < 400) {
    // goalrun's own client follows no redirect: a POST with a key goes nowhere the user did not name.
    const location = err.responseHeaders?.location ?? err.responseHeaders?.Location;
    return failure(
      FailureType.ConfigError,
      `${head}${location ? ` to ${quote(location)}` : ''}: the endpoint redirects; set the base URL (--base-url, config base_url, OPENAI_BASE_URL or OLLAMA_BASE_URL) to where it points`,
    );
  }
  const scanned = `${err.message} ${(err.responseBody ?? '').slice(0, MAX_SCANNED_BODY_CHARS)}`;
  if (CONTEXT_STATUSES.has(status) && CONTEXT_OVERFLOW_PATTERN.test(scanned)) {
    return failure(FailureType.ContextOverflow, message);
  }
  const quota = quotaOf(status, scanned, parseRetryAfter(err.responseHeaders), Date.now());
  if (quota) {
    return ApplicationFailure.create({
      type: FailureType.QuotaExhausted,
      message,
      nonRetryable: true,
      details: [{ resetAtMs: quota.resetAtMs }],
    });
  }
  if (AUTH_STATUSES.has(status)) return failure(FailureType.ProviderAuth, message);
  if (RETRYABLE_STATUSES.has(status) || status >= 500) {
    const retryAfterMs = parseRetryAfter(err.responseHeaders);
    const delay = retryAfterMs ? Math.min(retryAfterMs, MAX_RETRY_AFTER_MS) : undefined;
    // The status tells the failover rule an overloaded server (5xx, 529) from a rate limit (429).
    return failure(FailureType.ProviderUnavailable, message, delay, { status });
  }
  if (status >= 400) return failure(FailureType.ProviderBadRequest, message);
  // A success status with an error: the body broke off while streaming (connection dropped, bad
  // bytes). Nothing was wrong with the request, so another attempt is the cure.
  return failure(
    FailureType.ProviderUnavailable,
    `${where}: the response stream broke: ${quote(causeChainText(err))}`,
  );
}

/** The messages of an error and its causes, outermost first: `terminated: other side closed`. */
function causeChainText(err: Error): string {
  const messages: string[] = [];
  let current: unknown = err.cause;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    if (current.message) messages.push(current.message);
    current = current.cause;
  }
  return messages.length > 0 ? messages.join(': ') : err.message;
}

function failure(
  type: FailureTypeName,
  message: string,
  nextRetryDelayMs?: number,
  detail?: ProviderFailureDetail,
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: type !== FailureType.ProviderUnavailable,
    ...(nextRetryDelayMs !== undefined ? { nextRetryDelay: nextRetryDelayMs } : {}),
    ...(detail ? { details: [detail] } : {}),
  });
}

/** What a retryable provider failure carries besides its message: the HTTP status the provider answered. */
export interface ProviderFailureDetail {
  status: number;
}

/** The HTTP status a provider failure carries, when the provider answered with one. */
export function providerStatusOf(failure: ApplicationFailure): number | undefined {
  const status = (failure.details?.[0] as Partial<ProviderFailureDetail> | undefined)?.status;
  return typeof status === 'number' ? status : undefined;
}

function isNetworkError(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return true;
    // Only errors that carry no more specific classification are judged by their message.
    if (current instanceof TypeError && NETWORK_ERROR_PATTERN.test(current.message)) return true;
    if (/socket hang up|ECONNREFUSED|ECONNRESET/.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}

/**
 * True when the provider could not be reached at all: connection refused, DNS failure, no route. A
 * provider that answers with an error, or a connection that breaks mid-stream, is not unreachable.
 */
export function isUnreachableError(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && UNREACHABLE_ERROR_CODES.has(code)) return true;
    if (/\bECONNREFUSED\b|\bENOTFOUND\b|\bEAI_AGAIN\b/.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}

/** The text of an Error, or of the `{ message, type, code }` object a provider put in a stream. */
function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  if (typeof err === 'object' && err !== null) {
    const { message, type, code } = err as { message?: unknown; type?: unknown; code?: unknown };
    const label = [type, code].filter((part) => typeof part === 'string' && part !== '').join('/');
    if (typeof message === 'string') return label ? `${label}: ${message}` : message;
    try {
      return JSON.stringify(err);
    } catch {
      return String(err);
    }
  }
  return String(err);
}

function quoteProviderText(text: string, secrets?: string[]): string {
  const oneLine = redactSecrets(text, secrets).replace(/\s+/g, ' ').trim();
  return clip(oneLine, MAX_QUOTED_CHARS + 1);
}
