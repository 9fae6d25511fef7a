import { describe, expect, it } from 'vitest';
import type { GoalStatus } from '../../core/goal';
import { parseRetentionDuration, type RetentionCandidate, sessionsToClean } from '../../core/retention';

const now = new Date('2026-12-02T00:00:00Z');
const DAY = 86_400_000;

function session(id: string, daysAgo: number, extra: Partial<RetentionCandidate> = {}): RetentionCandidate {
  return {
    id,
    projectHash: 'p1',
    status: 'completed' as GoalStatus,
    name: null,
    updatedAt: new Date(now.getTime() - daysAgo * DAY),
    cleanedAt: null,
    ...extra,
  };
}

describe('sessionsToClean', () => {
  const rule = { keep: 2, includeNamed: false, now };

  it('keeps the newest N stopped sessions per project, oldest chosen first', () => {
    const list = [
      session('a', 1),
      session('b', 2),
      session('c', 3),
      session('d', 4),
      session('x', 9, { projectHash: 'p2' }),
    ];
    expect(sessionsToClean(list, rule, new Set()).map((s) => s.id)).toEqual(['d', 'c']);
  });

  it('never chooses a session that may still run, and does not count it among the kept', () => {
    const list = [
      session('run', 0, { status: 'running' }),
      session('paused', 0, { status: 'paused' }),
      session('approval', 0, { status: 'waiting_approval' }),
      session('limit', 0, { status: 'limit_reached' }),
      session('a', 1),
      session('b', 2),
      session('c', 3),
      session('live', 4),
    ];
    const chosen = sessionsToClean(list, rule, new Set(['live'])).map((s) => s.id);
    expect(chosen).toEqual(['c']);
  });

  it('keeps named sessions unless asked, honours --older-than, skips cleaned ones', () => {
    const list = [
      session('a', 1),
      session('b', 2),
      session('named', 30, { name: 'keep me' }),
      session('old', 40),
      session('young', 3),
      session('gone', 50, { cleanedAt: now }),
    ];
    expect(sessionsToClean(list, { ...rule, olderThanMs: 10 * DAY }, new Set()).map((s) => s.id)).toEqual([
      'old',
    ]);
    expect(
      sessionsToClean(list, { ...rule, includeNamed: true, olderThanMs: 10 * DAY }, new Set()).map(
        (s) => s.id,
      ),
    ).toEqual(['old', 'named']);
    expect(sessionsToClean(list, { ...rule, keep: 0 }, new Set()).map((s) => s.id)).toEqual([
      'old',
      'young',
      'b',
      'a',
    ]);
  });

  it('reads durations', () => {
    expect(parseRetentionDuration('30d')).toBe(30 * DAY);
    expect(parseRetentionDuration('12h')).toBe(12 * 3_600_000);
    expect(parseRetentionDuration('2w')).toBe(14 * DAY);
    expect(parseRetentionDuration('soon')).toBeNull();
  });
});
