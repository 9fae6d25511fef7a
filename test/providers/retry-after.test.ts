import { describe, expect, it } from 'vitest';
import { parseRetryAfter, parseRetryAfterValue } from '../../activities/providers/retry-after';

const NOW = Date.parse('2025-01-01T12:00:00Z');

describe('parseRetryAfterValue', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfterValue('2', NOW)).toBe(2_000);
    expect(parseRetryAfterValue(' 120 ', NOW)).toBe(120_000);
    expect(parseRetryAfterValue('0', NOW)).toBe(0);
  });

  it('accepts fractional seconds, rounding up to whole milliseconds', () => {
    expect(parseRetryAfterValue('1.5', NOW)).toBe(1_500);
    expect(parseRetryAfterValue('0.0001', NOW)).toBe(1);
  });

  it('reads an HTTP date relative to now', () => {
    expect(parseRetryAfterValue('Wed, 01 Jan 2025 12:00:30 GMT', NOW)).toBe(30_000);
  });

  it('gives 0 for a date in the past', () => {
    expect(parseRetryAfterValue('Wed, 01 Jan 2025 11:59:00 GMT', NOW)).toBe(0);
  });

  it('rejects garbage, negatives and empty values', () => {
    expect(parseRetryAfterValue('soon', NOW)).toBeUndefined();
    expect(parseRetryAfterValue('-5', NOW)).toBeUndefined();
    expect(parseRetryAfterValue('', NOW)).toBeUndefined();
    expect(parseRetryAfterValue('1e3', NOW)).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  it('returns undefined without headers or without a retry header', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter({ 'content-type': 'application/json' }, NOW)).toBeUndefined();
  });

  it('matches header names case-insensitively', () => {
    expect(parseRetryAfter({ 'Retry-After': '3' }, NOW)).toBe(3_000);
    expect(parseRetryAfter({ 'retry-after': '3' }, NOW)).toBe(3_000);
  });

  it('prefers retry-after-ms, which is more precise', () => {
    expect(parseRetryAfter({ 'retry-after': '2', 'retry-after-ms': '1234.5' }, NOW)).toBe(1_235);
  });

  it('falls back to retry-after when retry-after-ms is malformed', () => {
    expect(parseRetryAfter({ 'retry-after-ms': 'abc', 'retry-after': '2' }, NOW)).toBe(2_000);
  });

  it('reads an HTTP date header', () => {
    expect(parseRetryAfter({ 'retry-after': 'Wed, 01 Jan 2025 12:01:00 GMT' }, NOW)).toBe(60_000);
  });
});
