/**
 * The store-wide daily budget (issue 18 item 4): one money cap per UTC day over every goal of the
 * store. Each model call of any goal reserves its worst case here before it starts (a hold), records
 * what it cost as a paid call of its own (paid-calls.ts, with or without a cap), and the hold is
 * released after the step. A reservation is taken in one transaction that first locks the
 * single budget row (SELECT ... FOR UPDATE), then inserts its ledger row only if today's settled
 * spend + open reservations + this one stay within the cap: under READ COMMITTED the second worker
 * waits on the lock and its INSERT then sees the first one's row, so two workers never both take the
 * last dollar. The day is PostgreSQL's UTC date, so workers with skewed clocks agree on it.
 */
import type { SqlClient } from './sql';

/**
 * Float sums of per-call costs drift by far less than this: a reservation landing exactly on the cap
 * must not be refused for a rounding error (the same tolerance as core/spend-cap.ts).
 */
const USD_TOLERANCE = 1e-9;

/** Today's UTC date as PostgreSQL sees it. */
const TODAY_SQL = "(now() AT TIME ZONE 'UTC')::date";

/** What one day's row of the ledger counts: a settled call its cost, an open one its reservation. */
const COUNTED_SQL = 'coalesce(sum(coalesce(cost_usd, reserved_usd)), 0)';

/** The outcome of asking the daily budget for a call's worst case. */
export type DailyReservation =
  /** No daily budget is set: nothing was recorded. */
  | { kind: 'none' }
  /** Reserved: settle it with `id` after the call. */
  | { kind: 'reserved'; id: string }
  /** The cap would be passed; the figures say by how much. */
  | { kind: 'refused'; capUsd: number; countedUsd: number; reservationUsd: number; nextWindowAt: string };

/** One goal's and model's spend today. */
export interface DailySpendLine {
  sessionId: string;
  model: string;
  spentUsd: number;
  reservedUsd: number;
  /** Paid calls recorded, and reservations still held. */
  calls: number;
  /** Of the calls, attempts the provider billed without an answer the goal used. */
  retries: number;
}

/** `goalrun budget`: today's cap, spend and reservations, per goal and model. */
export interface DailyBudgetView {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  capUsd: number | null;
  spentUsd: number;
  reservedUsd: number;
  /** When today's window ends (the next UTC midnight), ISO. */
  nextWindowAt: string;
  lines: DailySpendLine[];
}

/** Sets the daily cap in dollars, or null to turn it off. */
export async function setDailyCap(client: SqlClient, capUsd: number | null): Promise<void> {
  await client.query('UPDATE daily_budget SET cap_usd = $1, updated_at = now() WHERE id', [capUsd]);
}

/** The daily cap in dollars, or null when none is set. */
export async function dailyCap(client: SqlClient): Promise<number | null> {
  const { rows } = await client.query<{ cap_usd: number | null }>(
    'SELECT cap_usd FROM daily_budget WHERE id',
  );
  return rows[0]?.cap_usd ?? null;
}

/** Reserves a call's worst case against today's cap, atomically over every worker of the store. */
export function reserveDaily(
  client: SqlClient,
  sessionId: string,
  model: string,
  reservationUsd: number,
): Promise<DailyReservation> {
  return client.transaction(async (tx) => {
    const { rows: budget } = await tx.query<{ cap_usd: number | null }>(
      'SELECT cap_usd FROM daily_budget WHERE id FOR UPDATE',
    );
    const capUsd = budget[0]?.cap_usd ?? null;
    if (capUsd === null) return { kind: 'none' } as const;
    const { rows: inserted } = await tx.query<{ id: string }>(
      `INSERT INTO daily_spend (day, session_id, model, reserved_usd)
       SELECT ${TODAY_SQL}, $1, $2, $3
       WHERE (SELECT ${COUNTED_SQL} FROM daily_spend WHERE day = ${TODAY_SQL}) + $3 <= $4
       RETURNING id`,
      [sessionId, model, reservationUsd, capUsd + USD_TOLERANCE],
    );
    if (inserted.length > 0) return { kind: 'reserved', id: String(inserted[0].id) } as const;
    const { rows: counted } = await tx.query<{ counted: number; next_window_at: Date }>(
      `SELECT ${COUNTED_SQL} AS counted, (${TODAY_SQL} + 1)::timestamp AT TIME ZONE 'UTC' AS next_window_at
       FROM daily_spend WHERE day = ${TODAY_SQL}`,
    );
    return {
      kind: 'refused',
      capUsd,
      countedUsd: Number(counted[0].counted),
      reservationUsd,
      nextWindowAt: new Date(counted[0].next_window_at).toISOString(),
    } as const;
  });
}

/** Settles a reservation with the call's reported cost (0 for a call that failed before any usage). */
export async function settleDaily(client: SqlClient, id: string, costUsd: number): Promise<void> {
  await client.query('UPDATE daily_spend SET cost_usd = $2, settled_at = now() WHERE id = $1', [id, costUsd]);
}

/** Today's cap, spend and open reservations, per goal and model. */
export async function dailyBudgetView(client: SqlClient): Promise<DailyBudgetView> {
  const { rows: head } = await client.query<{ day: string; cap_usd: number | null; next_window_at: Date }>(
    `SELECT to_char(${TODAY_SQL}, 'YYYY-MM-DD') AS day, cap_usd,
            (${TODAY_SQL} + 1)::timestamp AT TIME ZONE 'UTC' AS next_window_at
     FROM daily_budget WHERE id`,
  );
  const { rows } = await client.query<{
    session_id: string;
    model: string;
    spent: number;
    reserved: number;
    calls: string;
    retries: string;
  }>(
    `SELECT session_id, model,
            coalesce(sum(cost_usd), 0) AS spent,
            coalesce(sum(reserved_usd) FILTER (WHERE cost_usd IS NULL), 0) AS reserved,
            count(*) AS calls,
            count(*) FILTER (WHERE kind = 'retry') AS retries
     FROM daily_spend WHERE day = ${TODAY_SQL}
     GROUP BY session_id, model ORDER BY spent DESC, session_id, model`,
  );
  const lines = rows.map((row) => ({
    sessionId: row.session_id,
    model: row.model,
    spentUsd: Number(row.spent),
    reservedUsd: Number(row.reserved),
    calls: Number(row.calls),
    retries: Number(row.retries),
  }));
  return {
    day: head[0].day,
    capUsd: head[0].cap_usd,
    spentUsd: lines.reduce((sum, line) => sum + line.spentUsd, 0),
    reservedUsd: lines.reduce((sum, line) => sum + line.reservedUsd, 0),
    nextWindowAt: new Date(head[0].next_window_at).toISOString(),
    lines,
  };
}
