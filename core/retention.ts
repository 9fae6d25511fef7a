/**
 * Which sessions `goalrun clean` removes (issue 17, S-STORE retention). Pure, so the dry run and
 * `--yes` choose from the same rule: never a session that may still run (running, paused, waiting
 * for approval or at a limit, or whose workflow Temporal still runs), always keeping the newest N
 * stopped sessions of each project, and named sessions unless asked.
 */
import type { GoalStatus } from './goal';

/** Stopped sessions kept per project when --keep is not given. */
export const DEFAULT_RETENTION_KEEP = 5;

/** Statuses of a session that has stopped for good and may be cleaned. */
export const CLEANABLE_STATUSES: readonly GoalStatus[] = [
  'completed',
  'blocked',
  'failed',
  'cancelled',
  'cleared',
];

/** What the rule needs of a session. */
export interface RetentionCandidate {
  id: string;
  projectHash: string;
  status: GoalStatus;
  name: string | null;
  /** Its last activity. */
  updatedAt: Date;
  /** When it was cleaned, if it was. */
  cleanedAt: Date | null;
}

/** The rule's settings. */
export interface RetentionRule {
  /** Only sessions whose last activity is older than this (ms); all ages when absent. */
  olderThanMs?: number;
  keep: number;
  includeNamed: boolean;
  now: Date;
}

/** The sessions to clean, oldest first. `runningIds`: sessions whose workflow Temporal still runs. */
export function sessionsToClean<T extends RetentionCandidate>(
  sessions: readonly T[],
  rule: RetentionRule,
  runningIds: ReadonlySet<string>,
): T[] {
  const stopped = sessions.filter(
    (each) => each.cleanedAt === null && !runningIds.has(each.id) && CLEANABLE_STATUSES.includes(each.status),
  );
  const byProject = new Map<string, T[]>();
  for (const each of stopped)
    byProject.set(each.projectHash, [...(byProject.get(each.projectHash) ?? []), each]);
  const chosen: T[] = [];
  for (const list of byProject.values()) {
    const newestFirst = [...list].sort(
      (a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || (a.id < b.id ? 1 : -1),
    );
    for (const each of newestFirst.slice(Math.max(0, rule.keep))) {
      if (each.name && !rule.includeNamed) continue;
      if (rule.olderThanMs !== undefined && rule.now.getTime() - each.updatedAt.getTime() <= rule.olderThanMs)
        continue;
      chosen.push(each);
    }
  }
  return chosen.sort((a, b) => a.updatedAt.getTime() - b.updatedAt.getTime());
}

/** Parses a duration like `30d`, `12h`, `90m`, `2w` into ms; null when it is not one. */
export function parseRetentionDuration(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)\s*(m|h|d|w)$/i.exec(text.trim());
  if (!match) return null;
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[
    match[2].toLowerCase() as 'm' | 'h' | 'd' | 'w'
  ];
  return Number(match[1]) * unit;
}
