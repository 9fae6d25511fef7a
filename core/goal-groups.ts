/**
 * How `goalrun serve` groups goals for a person at a glance: those that need someone first, then
 * those running, those waiting on something that ends by itself, and the finished ones.
 */

/** The groups of the page, in the order shown. */
export const GOAL_GROUPS = ['needs_you', 'running', 'waiting', 'finished'] as const;

/** A group of the page. */
export type GoalGroup = (typeof GOAL_GROUPS)[number];

/** The headings of the groups. */
export const GROUP_TITLES: Record<GoalGroup, string> = {
  needs_you: 'Needs you',
  running: 'Running',
  waiting: 'Waiting',
  finished: 'Finished',
};

/** Statuses that wait for a person: an answer, a raise, a look. */
const NEEDS_YOU: ReadonlySet<string> = new Set([
  'waiting_approval',
  'budget_reached',
  'paused',
  'stalled',
  'blocked',
  'awaiting_user',
  'limit_reached',
]);

/** Statuses that wait on something that ends by itself (a quota window, the store, a worker). */
const WAITING: ReadonlySet<string> = new Set(['waiting_quota', 'waiting_store', 'waiting_for_worker']);

/** Whether a goal in this status needs a person. */
export function needsYou(status: string): boolean {
  return NEEDS_YOU.has(status);
}

/** The group a goal in this status is shown in. */
export function groupOf(status: string): GoalGroup {
  if (NEEDS_YOU.has(status)) return 'needs_you';
  if (WAITING.has(status)) return 'waiting';
  if (status === 'running') return 'running';
  return 'finished';
}

/** The actions that fit a goal in this status, in the order the page shows them. */
export function actionsFor(status: string): string[] {
  if (status === 'waiting_approval') return ['approve', 'deny', 'steer', 'cancel'];
  if (status === 'paused') return ['unpause', 'steer', 'cancel'];
  if (status === 'budget_reached' || status === 'limit_reached') return ['limits', 'steer', 'cancel'];
  if (groupOf(status) === 'finished') return [];
  return ['steer', 'pause', 'limits', 'cancel'];
}
