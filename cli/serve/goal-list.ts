/**
 * What `goalrun serve` shows of the store's goals: one small record per goal, read from the session
 * rows (each checkpoint writes the goal's status, counters and cost there), never from histories.
 */
import { actionsFor, groupOf, needsYou } from '../../core/goal-groups';
import type { SessionRow, SessionStore } from '../../store/types';
import { viewOfRow } from '../goal-status';

/** Goals the page lists, newest first. */
export const SERVE_LIST_LIMIT = 200;

/** One goal as the page and `GET /api/goals` show it. */
export interface ServedGoal {
  sessionId: string;
  name: string | null;
  status: string;
  group: string;
  needsYou: boolean;
  objective: string;
  steps: number;
  elapsedMs: number;
  costUsd: number;
  maxCostUsd: number | null;
  /** What it did last (the last tool), when known. */
  currentAction: string | null;
  /** Why it stopped or waits, when it says. */
  reason: string | null;
  actions: string[];
  updatedAt: string;
}

/** The record of one session row. */
export function servedGoal(row: SessionRow): ServedGoal {
  const view = viewOfRow(row);
  const status = String(view.status);
  return {
    sessionId: row.id,
    name: row.name ?? null,
    status,
    group: groupOf(status),
    needsYou: needsYou(status),
    objective: row.objective,
    steps: view.steps,
    elapsedMs: view.elapsedMs,
    costUsd: view.costUsd ?? 0,
    maxCostUsd: view.budget?.capUsd ?? null,
    currentAction: view.lastTool ?? null,
    reason: view.reason ?? null,
    actions: actionsFor(status),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The store's newest goals, cleaned sessions left out. */
export async function servedGoals(store: SessionStore): Promise<ServedGoal[]> {
  const rows = await store.listSessions(SERVE_LIST_LIMIT);
  return rows.filter((row) => !row.cleanedAt).map(servedGoal);
}
