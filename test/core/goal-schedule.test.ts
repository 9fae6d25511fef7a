/** The pure rules of goal schedules (issue 28 §3): names, ids, the firing's goal name, durations and cron specs. */
import { describe, expect, it } from 'vitest';
import {
  cronProblem,
  firingStamp,
  MIN_EVERY_MS,
  parseScheduleDuration,
  scheduledGoalName,
  scheduleIdOf,
  scheduleNameOf,
  scheduleNameProblem,
} from '../../core/goal-schedule';

describe('goal schedule names and ids', () => {
  it('accepts plain names and refuses what would not fit an id or a goal name', () => {
    expect(scheduleNameProblem('nightly')).toBeNull();
    expect(scheduleNameProblem('deps.update_2-a')).toBeNull();
    expect(scheduleNameProblem('')).toContain('empty');
    expect(scheduleNameProblem('a b')).toContain('may hold only');
    expect(scheduleNameProblem('-x')).toContain('starts with a letter or digit');
    expect(scheduleNameProblem('x'.repeat(61))).toContain('at most 60');
  });

  it('scopes ids to the task queue and reads the name back only from its own queue', () => {
    const id = scheduleIdOf('goalrun-abc', 'nightly');
    expect(id).toBe('goalrun-abc-schedule-nightly');
    expect(scheduleNameOf('goalrun-abc', id)).toBe('nightly');
    expect(scheduleNameOf('goalrun-other', id)).toBeNull();
    expect(scheduleNameOf('goalrun-abc', 'goalrun-abc-retention')).toBeNull();
  });

  it("names a firing's goal after the schedule and the firing's time, to the second, UTC", () => {
    const at = new Date('2026-12-04T03:00:00.000Z');
    expect(firingStamp(at)).toBe('20261204T030000Z');
    expect(scheduledGoalName('nightly', at)).toBe('nightly-20261204T030000Z');
    expect(firingStamp(new Date('2026-12-04T03:00:07.891Z'))).toBe('20261204T030007Z');
  });
});

describe('schedule durations', () => {
  it('reads m, h, d and w, and refuses others, below the floor and fractions of a second', () => {
    expect(parseScheduleDuration('1m', '--every', MIN_EVERY_MS)).toEqual({ ms: 60_000 });
    expect(parseScheduleDuration('6h', '--every', MIN_EVERY_MS)).toEqual({ ms: 21_600_000 });
    expect(parseScheduleDuration('1.5h', '--every', MIN_EVERY_MS)).toEqual({ ms: 5_400_000 });
    expect(parseScheduleDuration('2d', '--every', MIN_EVERY_MS)).toEqual({ ms: 172_800_000 });
    expect(parseScheduleDuration('5x', '--every', MIN_EVERY_MS)).toEqual({
      problem: '--every must be a duration such as 1m, 6h, 1d or 1w (m, h, d, w), got "5x"',
    });
    expect(parseScheduleDuration('0.5m', '--every', MIN_EVERY_MS)).toEqual({
      problem: '--every must be at least 1m, got "0.5m"',
    });
    expect(parseScheduleDuration('1.00001m', '--every', MIN_EVERY_MS)).toEqual({
      problem: '--every must be whole seconds, got "1.00001m"',
    });
  });
});

describe('cron specs', () => {
  it('accepts five-field specs, lists, ranges, steps, names and macros', () => {
    for (const spec of [
      '0 3 * * *',
      '*/15 * * * *',
      '0 9-17 * * MON-FRI',
      '0,30 1 1,15 JAN,jul 0',
      '0 0 * * 7',
      '@daily',
      '@HOURLY',
    ])
      expect(cronProblem(spec), spec).toBeNull();
  });

  it('names the field that is wrong', () => {
    expect(cronProblem('61 * * * *')).toContain('the minute field "61" must hold values from 0 to 59');
    expect(cronProblem('0 24 * * *')).toContain('the hour field "24"');
    expect(cronProblem('0 3 0 * *')).toContain('the day of month field "0"');
    expect(cronProblem('0 3 * 13 *')).toContain(
      'the month field "13" must hold values from 1 to 12 or JAN…DEC',
    );
    expect(cronProblem('0 3 * * FUN')).toContain('the day of week field "FUN"');
    expect(cronProblem('*/0 * * * *')).toContain('bad step');
    expect(cronProblem('1-2-3 * * * *')).toContain('not a value, range or list');
    expect(cronProblem('0 3 * *')).toContain('needs 5 fields');
    expect(cronProblem('@sometimes')).toContain('unknown macro');
  });
});
