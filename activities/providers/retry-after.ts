/** Milliseconds per second, for `Retry-After` values given in seconds. */
const MS_PER_SECOND = 1000;

/** A plain decimal number of seconds or milliseconds; anything else in these headers is an HTTP date. */
const DECIMAL_NUMBER = /^\d+(\.\d+)?$/;

/**
 * How long a provider asked us to wait, in milliseconds, from its response headers: `retry-after-ms`
 * (OpenAI; more precise, so it wins) or `Retry-After` as seconds or an HTTP date. Header names match
 * case-insensitively. Returns undefined when there is no usable header; a date in the past gives 0.
 */
export function parseRetryAfter(
  headers: Record<string, string | undefined> | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  if (headers === undefined) return undefined;
  const retryAfterMs = headerValue(headers, 'retry-after-ms');
  if (retryAfterMs !== undefined && DECIMAL_NUMBER.test(retryAfterMs)) {
    return Math.ceil(Number(retryAfterMs));
  }
  const retryAfter = headerValue(headers, 'retry-after');
  return retryAfter === undefined ? undefined : parseRetryAfterValue(retryAfter, nowMs);
}

/** Parses one `Retry-After` value (delay-seconds or HTTP date) into milliseconds from `nowMs`. */
export function parseRetryAfterValue(value: string, nowMs: number = Date.now()): number | undefined {
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  // RFC 9110 allows only whole seconds; some servers send fractions, which cost nothing to accept.
  if (DECIMAL_NUMBER.test(trimmed)) return Math.ceil(Number(trimmed) * MS_PER_SECOND);
  // Negative or otherwise signed numbers are malformed, not dates (Date.parse would accept "-1").
  if (/^[-+]?\d/.test(trimmed) && !/[a-z]/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

function headerValue(headers: Record<string, string | undefined>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && value !== undefined) return value.trim();
  }
  return undefined;
}
