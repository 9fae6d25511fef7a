/** One line (or JSON object) per session, for `goalrun sessions`, the resume picker and its error. */
import type { SessionRow, SessionStore } from '../store/types';
import { MIN_ID_PREFIX } from './goal-id';
import { snapshotFromRow } from './goal-status';
import { shortIdsFor } from './short-ids';
import { clipToWidth } from './terminal-text';

/** Display columns of the objective a list shows. */
export const LISTED_OBJECTIVE_COLUMNS = 60;

/** What a session list shows of one session. */
export interface SessionSummary {
  name: string | null;
  sessionId: string;
  /** The short id (cli/short-ids.ts): unique among the store's goals, and what every command takes. */
  shortId: string;
  /** The shortest prefix of the id that tells it apart from the others listed (before short ids). */
  idPrefix: string;
  status: string;
  steps: number;
  costUsd: number;
  /** When the session last changed (ISO). */
  lastActivity: string;
  objective: string;
  projectDir: string;
}

/** The summary of a row; shortId and idPrefix are the id unless given. */
export function summaryOf(row: SessionRow, shortId = row.id): SessionSummary {
  const view = snapshotFromRow(row);
  return {
    name: row.name ?? null,
    sessionId: row.id,
    shortId,
    idPrefix: row.id,
    status: row.cleanedAt ? 'cleaned' : (view?.status ?? row.status),
    steps: view?.steps ?? 0,
    costUsd: view?.costUsd ?? 0,
    lastActivity: row.updatedAt.toISOString(),
    objective: clipToWidth(row.objective.replace(/\s+/g, ' ').trim(), LISTED_OBJECTIVE_COLUMNS),
    projectDir: row.projectDir,
  };
}

/** Summaries with each session's short id, and the shortest prefix of its id no other listed id shares. */
export async function summariesOf(store: SessionStore, rows: SessionRow[]): Promise<SessionSummary[]> {
  const ids = rows.map((row) => row.id);
  const shortIds = await shortIdsFor(store, ids);
  return rows.map((row) => ({
    ...summaryOf(row, shortIds.get(row.id)),
    idPrefix: shortestUniquePrefix(row.id, ids),
  }));
}

/** The shortest prefix (at least MIN_ID_PREFIX long) of `id` that no other of `ids` starts with. */
export function shortestUniquePrefix(id: string, ids: string[]): string {
  for (let length = MIN_ID_PREFIX; length < id.length; length++) {
    const prefix = id.slice(0, length);
    if (ids.every((other) => other === id || !other.startsWith(prefix))) return prefix;
  }
  return id;
}

/** One readable line: name, short id, status, steps, cost, last activity, objective. */
export function sessionLine(summary: SessionSummary): string {
  const name = summary.name ? `${summary.name}  ` : '';
  const when = summary.lastActivity.replace('T', ' ').slice(0, 16);
  return `${name}${summary.shortId}  ${summary.status}  ${summary.steps} steps  $${summary.costUsd.toFixed(2)}  ${when}  ${summary.objective}`;
}

/** A line for one row on its own, with the short id given (else the whole id). */
export function describeSessionLine(row: SessionRow, shortId?: string): string {
  return sessionLine(summaryOf(row, shortId));
}
