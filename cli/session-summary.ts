/** One line (or JSON object) per session, for `goalrun sessions`, the resume picker and its error. */
import type { SessionRow } from '../store/types';
import { MIN_ID_PREFIX } from './goal-id';
import { snapshotFromRow } from './goal-status';
import { clipToWidth } from './terminal-text';

/** Display columns of the objective a list shows. */
export const LISTED_OBJECTIVE_COLUMNS = 60;

/** What a session list shows of one session. */
export interface SessionSummary {
  name: string | null;
  sessionId: string;
  /** The shortest prefix of the id that tells it apart from the others listed. */
  idPrefix: string;
  status: string;
  steps: number;
  costUsd: number;
  /** When the session last changed (ISO). */
  lastActivity: string;
  objective: string;
  projectDir: string;
}

/** The summary of a row; idPrefix is the id until shortestPrefixes sets it. */
export function summaryOf(row: SessionRow): SessionSummary {
  const view = snapshotFromRow(row);
  return {
    name: row.name ?? null,
    sessionId: row.id,
    idPrefix: row.id,
    status: row.cleanedAt ? 'cleaned' : (view?.status ?? row.status),
    steps: view?.steps ?? 0,
    costUsd: view?.costUsd ?? 0,
    lastActivity: row.updatedAt.toISOString(),
    objective: clipToWidth(row.objective.replace(/\s+/g, ' ').trim(), LISTED_OBJECTIVE_COLUMNS),
    projectDir: row.projectDir,
  };
}

/** Summaries with the shortest prefix of each id that no other listed id shares. */
export function summariesOf(rows: SessionRow[]): SessionSummary[] {
  const ids = rows.map((row) => row.id);
  return rows.map((row) => ({ ...summaryOf(row), idPrefix: shortestUniquePrefix(row.id, ids) }));
}

/** The shortest prefix (at least MIN_ID_PREFIX long) of `id` that no other of `ids` starts with. */
export function shortestUniquePrefix(id: string, ids: string[]): string {
  for (let length = MIN_ID_PREFIX; length < id.length; length++) {
    const prefix = id.slice(0, length);
    if (ids.every((other) => other === id || !other.startsWith(prefix))) return prefix;
  }
  return id;
}

/** One readable line: name, id prefix, status, steps, cost, last activity, objective. */
export function sessionLine(summary: SessionSummary): string {
  const name = summary.name ? `${summary.name}  ` : '';
  const when = summary.lastActivity.replace('T', ' ').slice(0, 16);
  return `${name}${summary.idPrefix}  ${summary.status}  ${summary.steps} steps  $${summary.costUsd.toFixed(2)}  ${when}  ${summary.objective}`;
}

/** A line for one row on its own (ids shown whole). */
export function describeSessionLine(row: SessionRow): string {
  return sessionLine(summaryOf(row));
}
