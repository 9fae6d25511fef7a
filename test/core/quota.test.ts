import { describe, expect, it } from 'vitest';
import { QUOTA_RETRY_AFTER_MIN_MS, quotaOf } from '../../core/quota';

const NOW = Date.parse('2026-12-02T06:00:00Z');

describe('quotaOf', () => {
  it('reads a long Retry-After on a 429 as a quota that comes back then', () => {
    expect(quotaOf(429, 'Rate limit reached', QUOTA_RETRY_AFTER_MIN_MS, NOW)).toEqual({
      resetAtMs: NOW + QUOTA_RETRY_AFTER_MIN_MS,
    });
    // A short back-off is an ordinary rate limit: retried as before.
    expect(quotaOf(429, 'Rate limit reached', 4_000, NOW)).toBeNull();
    expect(quotaOf(429, 'Rate limit reached', undefined, NOW)).toBeNull();
  });

  it('reads insufficient_quota and usage-limit bodies, with a reset time when the body gives one', () => {
    expect(quotaOf(429, '{"error":{"code":"insufficient_quota"}}', undefined, NOW)).toEqual({
      resetAtMs: null,
    });
    expect(quotaOf(429, '{"error":{"code":"insufficient_quota"}}', 6_000, NOW)).toEqual({
      resetAtMs: NOW + 6_000,
    });
    expect(
      quotaOf(
        429,
        '{"error":{"type":"usage_limit_reached","resets_at":"2026-12-02T09:30:00Z"}}',
        undefined,
        NOW,
      ),
    ).toEqual({ resetAtMs: Date.parse('2026-12-02T09:30:00Z') });
    expect(quotaOf(429, '{"error":"usage limit","reset_at": 1796212800}', undefined, NOW)).toEqual({
      resetAtMs: 1796212800 * 1000,
    });
    expect(quotaOf(402, 'Your credit balance is too low', undefined, NOW)).toEqual({ resetAtMs: null });
  });

  it('leaves other errors alone', () => {
    expect(quotaOf(400, 'insufficient_quota', undefined, NOW)).toBeNull();
    expect(quotaOf(500, 'usage limit', 10 * QUOTA_RETRY_AFTER_MIN_MS, NOW)).toBeNull();
  });
});
