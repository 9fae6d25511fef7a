import { describe, expect, it } from 'vitest';
import {
  DEFAULT_QUOTA_WAIT_MINUTES,
  dailyWaitEndReason,
  dailyWaitReason,
  impossibleDailyCall,
  quotaTooFar,
  waitLeftMs,
} from '../../core/waits';

const NOW = Date.parse('2026-12-02T06:00:00Z');

describe('waits that end', () => {
  it('refuses a call whose worst case alone is over the daily cap, naming both', () => {
    expect(impossibleDailyCall(0.05, 0.01)).toBe(
      'a single call needs $0.0500, the daily budget is $0.0100; raise it with: goalrun budget set --daily-usd N, then goalrun resume',
    );
    // A call that fits an empty day waits for one; a rounding error on the cap is not a refusal.
    expect(impossibleDailyCall(0.01, 0.01)).toBeNull();
    expect(impossibleDailyCall(0.1 + 0.2, 0.3)).toBeNull();
    expect(impossibleDailyCall(0.0099, 0.01)).toBeNull();
  });

  it('says in the status how to raise the daily budget, and why the wait ended', () => {
    const reason = dailyWaitReason(
      { capUsd: 1, countedUsd: 0.99, nextWindowAt: '2026-12-03T00:00:00.000Z' },
      0.02,
    );
    expect(reason).toBe(
      'daily budget reached: $0.9900 of $1.0000 used today, and the next model call may cost up to $0.0200; waiting until 2026-12-03T00:00:00.000Z, or raise it with: goalrun budget set --daily-usd N',
    );
    expect(dailyWaitEndReason(90 * 60_000, 'sess-1')).toBe(
      'daily budget reached, and no raise came in 90 minutes (budget_wait_minutes); raise it with: goalrun budget set --daily-usd N, then goalrun resume sess-1',
    );
    expect(dailyWaitEndReason(60_000, 'sess-1')).toContain('in 1 minute (');
  });

  it('counts a wait from its start, never below zero', () => {
    expect(waitLeftMs(NOW, 5 * 60_000, NOW + 2 * 60_000)).toBe(3 * 60_000);
    expect(waitLeftMs(NOW, 5 * 60_000, NOW + 5 * 60_000)).toBe(0);
    expect(waitLeftMs(NOW, 5 * 60_000, NOW + 9 * 60_000)).toBe(0);
  });

  it('refuses a quota wait longer than the longest one allowed', () => {
    const day = DEFAULT_QUOTA_WAIT_MINUTES * 60_000;
    expect(quotaTooFar(NOW + day, NOW, day, 'insufficient_quota')).toBeNull();
    expect(quotaTooFar(NOW + 60_000, NOW, day, 'insufficient_quota')).toBeNull();
    expect(quotaTooFar(NOW + day + 1, NOW, day, 'insufficient_quota')).toBe(
      'provider quota exhausted until 2026-12-03T06:00:00.001Z (insufficient_quota), later than the longest quota wait (1440 minutes, config quota_wait_minutes); resume with goalrun resume once the quota is back',
    );
  });
});
