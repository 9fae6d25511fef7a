/**
 * A message, the goal-state change that accounts for it and its events, written in one SQL statement:
 * one round trip instead of a six-statement transaction (BEGIN, insert, lock, update, insert, COMMIT)
 * on the path every model step takes. One statement is atomic on its own, and its UPDATE locks the
 * session row and merges into the newest committed state, as the locked read-modify-write did.
 */
import type { StateWrite } from '../core/state-write';
import { type PaidCall, paidCallInsertSql, paidCallParams } from './paid-calls';
import { jsonText } from './rows';
import type { SqlExecutor } from './sql';
import type { StoreEvent } from './types';

/** The merge of a state write split the way PostgreSQL applies it: top-level fields, then sub-fields. */
interface SplitWrite {
  top: Record<string, unknown>;
  nested: Record<string, Record<string, unknown>>;
}

/**
 * Splits a write's paths into top-level fields and `field.subfield` ones, or null when one field
 * appears both ways (applyStateWrite's order would then matter; the caller merges in JS instead).
 */
export function splitStateWrite(write: StateWrite): SplitWrite | null {
  const top: Record<string, unknown> = {};
  const nested: Record<string, Record<string, unknown>> = {};
  for (const [path, value] of Object.entries(write.set)) {
    const dot = path.indexOf('.');
    if (dot < 0) {
      top[path] = value;
      continue;
    }
    const head = path.slice(0, dot);
    nested[head] ??= {};
    nested[head][path.slice(dot + 1)] = value;
  }
  return Object.keys(nested).some((head) => head in top) ? null : { top, nested };
}

/**
 * The SQL expression of the merged state, over the row's `goal_state`: a full write starts from
 * nothing, then the top-level fields replace theirs, then each nested field is merged into its
 * object (or replaces a value that is not one), as applyStateWrite does.
 */
const MERGED_STATE = (full: string, top: string, nested: string) => `(
  SELECT base.x || coalesce(
    (SELECT jsonb_object_agg(n.key,
              CASE WHEN jsonb_typeof(base.x -> n.key) = 'object' THEN (base.x -> n.key) || n.value ELSE n.value END)
       FROM jsonb_each(${nested}::jsonb) AS n),
    '{}'::jsonb)
  FROM (SELECT (CASE WHEN ${full}::boolean THEN '{}'::jsonb ELSE coalesce(goal_state, '{}'::jsonb) END)
               || ${top}::jsonb AS x) AS base)`;

/** Parameters $1..$k of the state and event parts, after the ones the caller uses. */
function effectsParams(
  first: number,
  split: SplitWrite | null,
  write: StateWrite | undefined,
  events: StoreEvent[],
): { params: unknown[]; stateCte: string } {
  const p = (offset: number) => `$${first + offset}`;
  const params: unknown[] = [
    write !== undefined,
    write?.full ?? false,
    jsonText(split?.top ?? {}),
    jsonText(split?.nested ?? {}),
    write?.status ?? null,
    write?.reason !== undefined,
    write?.reason ?? null,
    jsonText(events.map((event) => ({ kind: event.kind, key: event.key ?? null, data: event.data ?? null }))),
  ];
  const stateCte = `state AS (
    UPDATE sessions SET
      goal_state = ${MERGED_STATE(p(1), p(2), p(3))},
      status = coalesce(${p(4)}::text, ${MERGED_STATE(p(1), p(2), p(3))} ->> 'status', status),
      reason = CASE WHEN ${p(5)}::boolean THEN ${p(6)}::text ELSE ${MERGED_STATE(p(1), p(2), p(3))} ->> 'reason' END,
      updated_at = now()
    WHERE id = $1 AND ${p(0)}::boolean
    RETURNING goal_state
  ),
  checkpoint AS (
    INSERT INTO checkpoints (session_id, goal_state, tasks)
    SELECT $1, goal_state, goal_state -> 'tasks' FROM state WHERE ${p(1)}::boolean
  ),
  logged AS (
    INSERT INTO events (session_id, kind, key, data)
    SELECT $1, e.kind, e.key, e.data FROM jsonb_to_recordset(${p(7)}::jsonb) AS e(kind text, key text, data jsonb)
    ON CONFLICT (session_id, key) DO NOTHING
  )`;
  return { params, stateCte };
}

/** Whether this write can go as one statement (else the caller uses its transaction). */
export function canWriteInOneStatement(write: StateWrite | undefined): boolean {
  return write === undefined || splitStateWrite(write) !== null;
}

/**
 * Inserts a message once under its key, applies the state write, logs the events and records the
 * paid call it answers, in one statement. Returns the new row's seq, or null when the key was taken (the state and the events
 * are applied all the same, as the transaction did; the caller looks the existing seq up).
 */
export async function insertMessageWithEffects(
  db: SqlExecutor,
  row: { sessionId: string; key: string; role: string; content: string; meta: string | null },
  write: StateWrite | undefined,
  events: StoreEvent[],
  paidCall?: PaidCall,
): Promise<{ seq: number | null; stateRows: number }> {
  const effects = effectsParams(6, write ? splitStateWrite(write) : null, write, events);
  const paidFirst = 6 + effects.params.length;
  // The call the message answers: its ledger row commits with it (keyed, so written once).
  const paid = paidCall
    ? `,
     paid AS (${paidCallInsertSql(paidFirst)})`
    : '';
  const { rows } = await db.query<{ seq: string | number | null; state_rows: string | number }>(
    `WITH inserted AS (
       INSERT INTO messages (session_id, key, role, content, meta)
       VALUES ($1, $2, $3, $4::jsonb, $5::jsonb)
       ON CONFLICT (session_id, key) DO NOTHING
       RETURNING seq
     ),
     ${effects.stateCte}${paid}
     SELECT (SELECT seq FROM inserted) AS seq, (SELECT count(*) FROM state) AS state_rows`,
    [
      row.sessionId,
      row.key,
      row.role,
      row.content,
      row.meta,
      ...effects.params,
      ...(paidCall ? paidCallParams(paidCall) : []),
    ],
  );
  const result = rows[0];
  return { seq: result?.seq == null ? null : Number(result.seq), stateRows: Number(result?.state_rows ?? 0) };
}

/** Applies a state write and logs events in one statement; returns how many session rows it changed. */
export async function writeStateWithEvents(
  db: SqlExecutor,
  sessionId: string,
  write: StateWrite,
  events: StoreEvent[],
): Promise<number> {
  const effects = effectsParams(2, splitStateWrite(write), write, events);
  const { rows } = await db.query<{ state_rows: string | number }>(
    `WITH ${effects.stateCte}
     SELECT (SELECT count(*) FROM state) AS state_rows`,
    [sessionId, ...effects.params],
  );
  return Number(rows[0]?.state_rows ?? 0);
}
