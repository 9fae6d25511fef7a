/**
 * Paid calls in the daily ledger (issue 24 item 4, issue 26 item 5; the ledger is daily-budget.ts).
 * Every call a provider bills records its own cost here, from the activity that made it, whether or
 * not a daily cap is set: `goalrun budget` then shows all the spend, and a cap set at noon counts the
 * morning. A row is keyed within its session, so an activity retried after a crash records its call
 * once. The attempts billed without an answer the goal used keep their usage, so the workflow can
 * count them in the goal's tokens and money too (it reads them back by their key's prefix).
 */
import type { BilledAttemptRecord } from '../core/paid-calls';
import type { RequestUsage } from '../core/usage';
import type { SqlExecutor } from './sql';

/** Today's UTC date as PostgreSQL sees it (the day of the ledger row). */
const TODAY_SQL = "(now() AT TIME ZONE 'UTC')::date";

/** What a ledger row records: an answered step, a summary, or an attempt billed without a used answer. */
export type PaidCallKind = 'answer' | 'summary' | 'retry';

/** One paid call, as an activity records it. */
export interface PaidCall {
  sessionId: string;
  /** Unique within the session: the second record of the same call is ignored. */
  key: string;
  kind: PaidCallKind;
  model: string;
  usage: RequestUsage;
  costUsd: number;
  /** Counted at the call's worst case: the provider reported no usage for it. */
  atReservation: boolean;
}

/**
 * The insert of a paid call's row, its parameters numbered from `$first` in the order of
 * {@link paidCallParams}: on its own (recordPaidCall), or beside the message that answers the call
 * (effects-write.ts), so that the answer and its cost commit together.
 */
export function paidCallInsertSql(first: number): string {
  const p = (offset: number) => `$${first + offset}`;
  return `INSERT INTO daily_spend (day, session_id, model, reserved_usd, cost_usd, settled_at, key, kind, usage, at_reservation)
     VALUES (${TODAY_SQL}, ${p(0)}, ${p(1)}, ${p(2)}, ${p(2)}, now(), ${p(3)}, ${p(4)}, ${p(5)}::jsonb, ${p(6)})
     ON CONFLICT (session_id, key) WHERE key IS NOT NULL DO NOTHING`;
}

/** The parameters of {@link paidCallInsertSql}, in order. */
export function paidCallParams(call: PaidCall): unknown[] {
  return [
    call.sessionId,
    call.model,
    call.costUsd,
    call.key,
    call.kind,
    JSON.stringify(call.usage),
    call.atReservation,
  ];
}

/** Records a paid call once under its key, settled at its cost today; false when it was recorded before. */
export async function recordPaidCall(db: SqlExecutor, call: PaidCall): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>(
    `${paidCallInsertSql(1)} RETURNING id`,
    paidCallParams(call),
  );
  return rows.length > 0;
}

/** The paid calls of a session whose key starts with `keyPrefix` (one activity's billed attempts). */
export async function paidCallsUnder(
  db: SqlExecutor,
  sessionId: string,
  keyPrefix: string,
): Promise<BilledAttemptRecord[]> {
  const { rows } = await db.query<{ usage: RequestUsage; cost_usd: number; at_reservation: boolean }>(
    `SELECT usage, cost_usd, at_reservation FROM daily_spend
     WHERE session_id = $1 AND key LIKE $2 ESCAPE '\\' ORDER BY id`,
    [sessionId, `${escapeLike(keyPrefix)}%`],
  );
  return rows.map((row) => ({
    usage: row.usage,
    costUsd: Number(row.cost_usd),
    atReservation: row.at_reservation,
  }));
}

/**
 * Takes back a billed attempt recorded under `key`: its answer turned out to be the step's answer
 * after all (stored despite the error its attempt saw, or kept and stored by the next attempt), and
 * the answer's own row counts it.
 */
export async function voidPaidAttempt(db: SqlExecutor, sessionId: string, key: string): Promise<void> {
  await db.query("DELETE FROM daily_spend WHERE session_id = $1 AND key = $2 AND kind = 'retry'", [
    sessionId,
    key,
  ]);
}

/**
 * Releases a daily reservation after its step: the calls made under it recorded their own cost, so
 * the hold goes (a reservation settled before calls recorded themselves keeps its cost).
 */
export async function releaseDaily(db: SqlExecutor, id: string): Promise<void> {
  await db.query('DELETE FROM daily_spend WHERE id = $1 AND cost_usd IS NULL', [id]);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}
