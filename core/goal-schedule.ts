/**
 * Scheduled goals (issue 28 §3): a Temporal Schedule that starts a goal named `NAME-<time>` at each
 * firing. Pure: the schedule's id, its spec and policies as the user gives them, checked, and the name
 * of each firing's goal, so `goalrun schedule …`, the scheduled workflow and the tests agree.
 */
import type { GoalDefinition } from './goal';
import { parseRetentionDuration } from './retention';

/** The workflow type a goal schedule starts (workflows/scheduled-goal-workflow.ts). */
export const SCHEDULED_GOAL_WORKFLOW_TYPE = 'scheduledGoalWorkflow';
/** What overlap policies `--overlap` accepts: skip a firing while a goal runs, or keep one to run after it. */
export const OVERLAP_CHOICES = ['skip', 'buffer-one'] as const;
/** One of OVERLAP_CHOICES. */
export type OverlapChoice = (typeof OVERLAP_CHOICES)[number];
/** A firing missed while the server was down still starts its goal if the server is back within this. */
export const DEFAULT_CATCHUP_WINDOW = '1h';
/** The shortest `--every`: a goal takes minutes; firing more often would only pile up skips. */
export const MIN_EVERY_MS = 60_000;
/** The shortest catch-up window; Temporal's own floor is 10 s. */
export const MIN_CATCHUP_MS = 60_000;
/** Longest schedule name: it prefixes every goal's name, which `list` shows in one line. */
export const MAX_SCHEDULE_NAME_CHARS = 60;

/** What a schedule's workflow is given: the checked goal (its session id is set at each firing) and where its session belongs. */
export interface ScheduledGoalInput {
  /** The schedule's name: each goal is named `<schedule>-<time>`. */
  schedule: string;
  /** The goal as `goalrun start` would start it, with an empty session id. */
  goal: GoalDefinition;
  /** The workspace's real path: the project the goals' names belong to. */
  projectDir: string;
  /** The project hash of that real path (the session row's). */
  projectHash: string;
  /** The project hash session ids start with (of the workspace as given, as `start` makes them). */
  idHash: string;
}

/** What one firing did: the goal it started and how that goal ended. */
export interface ScheduledGoalResult {
  name: string;
  sessionId: string;
  /** The goal's final status (completed, blocked, failed, cancelled, …), or `terminated`. */
  status: string;
}

/** The memo the scheduled workflow writes once its goal has a session: `schedule show` reads it. */
export interface ScheduledGoalMemo {
  goal: string;
  sessionId: string;
}

/** Checks a schedule name (letters, digits, `.`, `_`, `-`): it goes into Temporal ids and goal names. */
export function scheduleNameProblem(name: string): string | null {
  if (name.length === 0) return 'the schedule name is empty';
  if (name.length > MAX_SCHEDULE_NAME_CHARS)
    return `the schedule name has ${name.length} characters; at most ${MAX_SCHEDULE_NAME_CHARS}`;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name))
    return `the schedule name "${name}" may hold only letters, digits, ".", "_" and "-", and starts with a letter or digit`;
  return null;
}

/** The prefix of every goal schedule of a task queue (one per store, as the queue is). */
export function scheduleIdPrefix(taskQueue: string): string {
  return `${taskQueue}-schedule-`;
}

/** The Temporal Schedule id of a named goal schedule. */
export function scheduleIdOf(taskQueue: string, name: string): string {
  return `${scheduleIdPrefix(taskQueue)}${name}`;
}

/** The name of a goal schedule from its id, or null when the id is not one of this queue's. */
export function scheduleNameOf(taskQueue: string, scheduleId: string): string | null {
  const prefix = scheduleIdPrefix(taskQueue);
  return scheduleId.startsWith(prefix) ? scheduleId.slice(prefix.length) : null;
}

/** `2026-12-03T03:00:00.000Z` → `20261203T030000Z`: the time in a goal's name, to the second. */
export function firingStamp(at: Date): string {
  return at
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '');
}

/** The name of the goal a firing starts: `<schedule>-<time of the firing>`. */
export function scheduledGoalName(schedule: string, at: Date): string {
  return `${schedule}-${firingStamp(at)}`;
}

/** An `--every` or `--catchup-window` duration (`1m`, `6h`, `2d`, `1w`) in ms, or the problem. */
export function parseScheduleDuration(
  text: string,
  flag: string,
  minMs: number,
): { ms: number } | { problem: string } {
  const ms = parseRetentionDuration(text);
  if (ms === null)
    return { problem: `${flag} must be a duration such as 1m, 6h, 1d or 1w (m, h, d, w), got "${text}"` };
  if (ms < minMs) return { problem: `${flag} must be at least ${minMs / 60_000}m, got "${text}"` };
  if (ms % 1000 !== 0) return { problem: `${flag} must be whole seconds, got "${text}"` };
  return { ms };
}

/** The macros a cron spec may be instead of five fields. */
const CRON_MACROS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];
/** The five fields of a cron spec: name, lowest, highest, names for values. */
const CRON_FIELDS: Array<{ name: string; min: number; max: number; names?: string[] }> = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
  },
  { name: 'day of week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

/**
 * The problem of a cron spec (`minute hour day-of-month month day-of-week`, UTC, or a macro such as
 * `@daily`), or null when it is good. Checked here so a typo is a usage error before Temporal is asked.
 */
export function cronProblem(spec: string): string | null {
  const text = spec.trim();
  if (text.startsWith('@')) {
    return CRON_MACROS.includes(text.toLowerCase())
      ? null
      : `--cron: unknown macro "${text}" (known: ${CRON_MACROS.join(', ')})`;
  }
  const fields = text.split(/\s+/);
  if (fields.length !== CRON_FIELDS.length)
    return `--cron needs 5 fields (minute hour day-of-month month day-of-week, UTC), got ${fields.length} in "${text}"; e.g. "0 3 * * *" is daily at 03:00 UTC`;
  for (const [index, field] of fields.entries()) {
    const problem = cronFieldProblem(field, CRON_FIELDS[index]);
    if (problem) return `--cron "${text}": ${problem}`;
  }
  return null;
}

/** The problem of one cron field (a list of `*`, `N`, `N-M`, each with an optional `/step`), or null. */
function cronFieldProblem(field: string, rule: (typeof CRON_FIELDS)[number]): string | null {
  for (const item of field.split(',')) {
    const [range, step, ...rest] = item.split('/');
    if (rest.length > 0 || (step !== undefined && !/^[1-9]\d*$/.test(step)))
      return `the ${rule.name} field "${field}" has a bad step`;
    if (range === '*') continue;
    const bounds = range.split('-');
    if (bounds.length > 2) return `the ${rule.name} field "${field}" is not a value, range or list`;
    for (const bound of bounds) {
      const value = cronValue(bound, rule);
      if (value === null)
        return `the ${rule.name} field "${field}" must hold values from ${rule.min} to ${rule.max}${rule.names ? ` or ${rule.names[0]}…${rule.names.at(-1)}` : ''}`;
    }
  }
  return null;
}

/** A cron value (a number, or a month or weekday name) within the field's range, or null. */
function cronValue(text: string, rule: (typeof CRON_FIELDS)[number]): number | null {
  const named = rule.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return named + rule.min;
  if (!/^\d+$/.test(text)) return null;
  const value = Number(text);
  return value >= rule.min && value <= rule.max ? value : null;
}
