import { describe, expect, it } from 'vitest';
import {
  isShortIdShape,
  matchesShortId,
  SHORT_ID_LENGTH,
  sessionIdEndOf,
  sessionIdWith,
  shortIdAmong,
  shortIdOf,
  stampDigitsOf,
} from '../../core/session-ids';

const HASH = '3f2a9c0d1e4b';
const at = (iso: string, hash = HASH) => sessionIdWith(hash, new Date(iso));

describe('short ids', () => {
  it('are the end of the timestamp: the part goals of one directory do not share', () => {
    const first = at('2026-11-30T15:21:51.123Z');
    const second = at('2026-11-30T15:21:52.004Z');
    expect(first).toBe('3f2a9c0d1e4b-20261130T152151123Z');
    expect(stampDigitsOf(first)).toBe('20261130152151123');
    expect(shortIdOf(first)).toBe('52151123');
    expect(shortIdAmong(first, [first, second])).toBe('52151123');
    expect(shortIdAmong(second, [first, second])).toBe('52152004');
    expect(shortIdOf(first)).toHaveLength(SHORT_ID_LENGTH);
  });

  it('grow a digit at a time until no other goal of the store ends the same', () => {
    // Same millisecond of the same minute, hours ten apart: the 8 digits are shared, 9 are not.
    const first = at('2026-11-30T05:21:51.123Z');
    const second = at('2026-11-30T15:21:51.123Z');
    expect(shortIdAmong(first, [second])).toBe('052151123');
    expect(shortIdAmong(second, [first])).toBe('152151123');
    // A day apart at the same time: the short id reaches into the date, without the T.
    const dayBefore = at('2026-11-29T15:21:51.123Z');
    expect(shortIdAmong(second, [dayBefore])).toBe('0152151123');
    expect(sessionIdEndOf('0152151123')).toBe('0T152151123Z');
    expect(second.endsWith(sessionIdEndOf('0152151123')!)).toBe(true);
    expect(dayBefore.endsWith(sessionIdEndOf('0152151123')!)).toBe(false);
  });

  it('fall back to the whole id when the whole timestamp is shared or the id has another shape', () => {
    const here = at('2026-11-30T15:21:51.123Z');
    const there = at('2026-11-30T15:21:51.123Z', 'aaaaaaaaaaaa');
    expect(shortIdAmong(here, [there])).toBe(here);
    expect(shortIdOf('not-a-session')).toBe('not-a-session');
    expect(stampDigitsOf('goalrun-3f2a9c0d1e4b-20261130T152151123Z')).toBeNull();
  });

  it('name a session at any length a short id may have, and nothing else', () => {
    const id = at('2026-11-30T15:21:51.123Z');
    expect(matchesShortId(id, '52151123')).toBe(true);
    expect(matchesShortId(id, '152151123')).toBe(true);
    expect(matchesShortId(id, '20261130152151123')).toBe(true);
    expect(matchesShortId(id, '2151123')).toBe(false); // too short
    expect(matchesShortId(id, '52151124')).toBe(false);
    expect(matchesShortId(id, '3f2a9c0d')).toBe(false);
    expect(isShortIdShape('12345678')).toBe(true);
    expect(isShortIdShape('1234567')).toBe(false);
    expect(isShortIdShape('123456789012345678')).toBe(false);
    expect(sessionIdEndOf('52151123')).toBe('52151123Z');
    expect(sessionIdEndOf('5215112x')).toBeNull();
  });
});
