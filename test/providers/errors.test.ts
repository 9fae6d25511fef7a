import { APICallError } from '@ai-sdk/provider';
import { ApplicationFailure, msToNumber } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  abortErrorFrom,
  isAbortError,
  MAX_RETRY_AFTER_MS,
  redactSecrets,
  toActivityFailure,
} from '../../activities/providers/errors';
import { ConfigError, FailureType } from '../../core/errors';

const CONTEXT = { provider: 'anthropic', model: 'claude-test' };

function apiError(statusCode: number | undefined, message: string, extra: Partial<APICallError> = {}) {
  return new APICallError({
    message,
    url: 'https://api.example.test/v1/messages',
    requestBodyValues: { messages: ['secret prompt'] },
    statusCode,
    responseHeaders: extra.responseHeaders,
    responseBody: extra.responseBody,
    isRetryable: extra.isRetryable,
  });
}

describe('toActivityFailure', () => {
  it.each([408, 409, 429, 500, 502, 503, 529])(
    'maps HTTP %i to a retryable ProviderUnavailable',
    (status) => {
      const failure = toActivityFailure(apiError(status, 'try later'), CONTEXT);
      expect(failure.type).toBe(FailureType.ProviderUnavailable);
      expect(failure.nonRetryable).toBe(false);
      expect(failure.message).toContain(`anthropic model claude-test: HTTP ${status}`);
    },
  );

  it.each([401, 403])('maps HTTP %i to a non-retryable ProviderAuth', (status) => {
    const failure = toActivityFailure(apiError(status, 'invalid x-api-key'), CONTEXT);
    expect(failure.type).toBe(FailureType.ProviderAuth);
    expect(failure.nonRetryable).toBe(true);
  });

  it.each([400, 404, 422, 413])(
    'maps HTTP %i without a context complaint to ProviderBadRequest',
    (status) => {
      const failure = toActivityFailure(apiError(status, 'bad field'), CONTEXT);
      expect(failure.type).toBe(FailureType.ProviderBadRequest);
      expect(failure.nonRetryable).toBe(true);
    },
  );

  it.each([
    [400, 'prompt is too long: 210000 tokens > 200000 maximum'],
    [400, "This model's maximum context length is 8192 tokens"],
    [413, 'Too many tokens in request'],
    [400, 'Your input exceeds the context window of this model'],
  ])('maps HTTP %i "%s" to ContextOverflow', (status, message) => {
    const failure = toActivityFailure(apiError(status, message), CONTEXT);
    expect(failure.type).toBe(FailureType.ContextOverflow);
    expect(failure.nonRetryable).toBe(true);
  });

  it('finds a context complaint in the response body too', () => {
    const err = apiError(400, 'Bad Request', {
      responseBody: '{"error":{"code":"context_length_exceeded","message":"..."}}',
    });
    expect(toActivityFailure(err, CONTEXT).type).toBe(FailureType.ContextOverflow);
  });

  it('does not treat a 429 about tokens per minute as a context overflow', () => {
    const failure = toActivityFailure(apiError(429, 'Rate limit: too many tokens per minute'), CONTEXT);
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
  });

  it('honours Retry-After as nextRetryDelay', () => {
    const failure = toActivityFailure(
      apiError(429, 'slow down', { responseHeaders: { 'retry-after': '7' } }),
      CONTEXT,
    );
    expect(msToNumber(failure.nextRetryDelay!)).toBe(7_000);
  });

  it('honours retry-after-ms as nextRetryDelay', () => {
    const headers = { 'retry-after-ms': '250' };
    const failure = toActivityFailure(apiError(503, 'busy', { responseHeaders: headers }), CONTEXT);
    expect(msToNumber(failure.nextRetryDelay!)).toBe(250);
  });

  it('caps an enormous Retry-After on a server error', () => {
    const headers = { 'retry-after': '86400' };
    const failure = toActivityFailure(apiError(503, 'overloaded', { responseHeaders: headers }), CONTEXT);
    expect(msToNumber(failure.nextRetryDelay!)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('makes a 429 with a long Retry-After a quota to wait out, not a retry (issue 18)', () => {
    const headers = { 'retry-after': '86400' };
    const before = Date.now();
    const failure = toActivityFailure(apiError(429, 'quota', { responseHeaders: headers }), CONTEXT);
    expect(failure.type).toBe('QuotaExhausted');
    expect(failure.nonRetryable).toBe(true);
    const { resetAtMs } = (failure.details ?? [])[0] as { resetAtMs: number };
    expect(resetAtMs).toBeGreaterThanOrEqual(before + 86_400_000);
  });

  it('leaves nextRetryDelay unset for Retry-After: 0', () => {
    const failure = toActivityFailure(
      apiError(429, 'x', { responseHeaders: { 'retry-after': '0' } }),
      CONTEXT,
    );
    expect(failure.nextRetryDelay).toBeUndefined();
  });

  it('maps a status-less APICallError (cannot connect) to a retryable failure', () => {
    const failure = toActivityFailure(
      apiError(undefined, 'Cannot connect to API: connect ECONNREFUSED'),
      CONTEXT,
    );
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.message).toContain('network error');
  });

  it.each([
    ['fetch failed', Object.assign(new TypeError('fetch failed'), { cause: new Error('boom') })],
    ['ECONNRESET code', Object.assign(new Error('read failed'), { code: 'ECONNRESET' })],
    ['socket hang up', new Error('socket hang up')],
    [
      'code in the cause chain',
      new Error('outer', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) }),
    ],
  ])('maps a network error (%s) to a retryable ProviderUnavailable', (_label, err) => {
    const failure = toActivityFailure(err, CONTEXT);
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.nonRetryable).toBe(false);
  });

  it('maps a provider error object from the stream by its content', () => {
    const overloaded = toActivityFailure({ type: 'overloaded_error', message: 'Overloaded' }, CONTEXT);
    expect(overloaded.type).toBe(FailureType.ProviderUnavailable);
    expect(overloaded.message).toBe(
      'anthropic model claude-test: stream error: overloaded_error: Overloaded',
    );
    const tooLong = toActivityFailure({ code: 'context_length_exceeded', message: 'x' }, CONTEXT);
    expect(tooLong.type).toBe(FailureType.ContextOverflow);
  });

  it('maps AI SDK request-building errors to ProviderBadRequest and key errors to ConfigError', () => {
    const unsupported = Object.assign(new Error('file parts are not supported'), {
      name: 'AI_UnsupportedFunctionalityError',
    });
    expect(toActivityFailure(unsupported, CONTEXT).type).toBe(FailureType.ProviderBadRequest);
    const noKey = Object.assign(new Error('API key is missing'), { name: 'AI_LoadAPIKeyError' });
    expect(toActivityFailure(noKey, CONTEXT)).toMatchObject({
      type: FailureType.ConfigError,
      nonRetryable: true,
    });
  });

  it('maps ConfigError to a non-retryable ConfigError failure', () => {
    const failure = toActivityFailure(new ConfigError('bad model file'), CONTEXT);
    expect(failure).toMatchObject({ type: FailureType.ConfigError, nonRetryable: true });
  });

  it('passes an ApplicationFailure through unchanged', () => {
    const original = ApplicationFailure.create({ type: 'Custom', message: 'x' });
    expect(toActivityFailure(original, CONTEXT)).toBe(original);
  });

  it('rethrows an abort instead of mapping it', () => {
    const abort = new DOMException('aborted', 'AbortError');
    expect(() => toActivityFailure(abort, CONTEXT)).toThrow(abort);
  });

  it('treats a timeout (not an abort) as retryable', () => {
    const timeout = new DOMException('timed out', 'TimeoutError');
    expect(toActivityFailure(timeout, CONTEXT)).toMatchObject({ type: FailureType.ProviderUnavailable });
  });

  it('never puts keys, the request body or long bodies into the message', () => {
    const longBody = 'x'.repeat(5_000);
    const err = apiError(
      401,
      `Incorrect API key provided: sk-ant-api03-abcdefghijklmnop. Bearer abc.def ${longBody}`,
    );
    const failure = toActivityFailure(err, { ...CONTEXT, secrets: ['my-very-secret-value'] });
    expect(failure.message).not.toContain('abcdefghijklmnop');
    expect(failure.message).not.toContain('abc.def');
    expect(failure.message).not.toContain('secret prompt');
    expect(failure.message.length).toBeLessThan(500);
  });
});

describe('redactSecrets', () => {
  it('removes known secrets, sk- keys, bearer tokens and api-key assignments', () => {
    const text =
      'key my-very-secret-value, sk-proj-ABCDEF123456, Bearer tok_123, "x-api-key": "abc123", api_key=zzz';
    const redacted = redactSecrets(text, ['my-very-secret-value']);
    expect(redacted).not.toMatch(/my-very-secret-value|ABCDEF123456|tok_123|abc123|zzz/);
  });

  it('ignores secrets too short to be keys', () => {
    expect(redactSecrets('a short word', ['a'])).toBe('a short word');
  });
});

describe('abort helpers', () => {
  it('recognizes AbortError and CancelledFailure', () => {
    expect(isAbortError(new DOMException('x', 'AbortError'))).toBe(true);
    expect(isAbortError(Object.assign(new Error('x'), { name: 'CancelledFailure' }))).toBe(true);
    expect(isAbortError(new Error('x'))).toBe(false);
  });

  it('turns any abort reason into an AbortError that keeps the reason', () => {
    const controller = new AbortController();
    const reason = Object.assign(new Error('cancelled'), { name: 'CancelledFailure' });
    controller.abort(reason);
    const err = abortErrorFrom(controller.signal);
    expect(err.name).toBe('AbortError');
    expect(err.cause).toBe(reason);
  });

  it('reuses the default AbortError of a plain abort()', () => {
    const controller = new AbortController();
    controller.abort();
    expect(abortErrorFrom(controller.signal)).toBe(controller.signal.reason);
  });
});
