/** Reading the events log: a session's events by id or key, the newest id and time, and counts for streaming. */
import { type EventRecord, toEvent } from './rows';
import type { SqlExecutor } from './sql';
import type { EventRow } from './types';

/** The id of the session's newest event, or 0 when it has none. */
export async function lastEventId(db: SqlExecutor, sessionId: string): Promise<number> {
  const { rows } = await db.query<{ id: string | number | null }>(
    'SELECT max(id) AS id FROM events WHERE session_id = $1',
    [sessionId],
  );
  return Number(rows[0]?.id ?? 0);
}

/** The session's event written under this key, or null. */
export async function getEventByKey(
  db: SqlExecutor,
  sessionId: string,
  key: string,
): Promise<EventRow | null> {
  const { rows } = await db.query<EventRecord>(
    'SELECT id, session_id, kind, data, created_at FROM events WHERE session_id = $1 AND key = $2',
    [sessionId, key],
  );
  return rows.length > 0 ? toEvent(rows[0]) : null;
}

/** When the session's newest event of one of these kinds was written, or null. */
export async function lastEventAt(db: SqlExecutor, sessionId: string, kinds: string[]): Promise<Date | null> {
  const { rows } = await db.query<{ at: Date | string | null }>(
    'SELECT max(created_at) AS at FROM events WHERE session_id = $1 AND kind = ANY($2::text[])',
    [sessionId, kinds],
  );
  const at = rows[0]?.at;
  return at ? new Date(at) : null;
}

/** The session's events after `afterId` (all when absent) in id order, at most `limit` (all when absent). */
export async function listEvents(
  db: SqlExecutor,
  sessionId: string,
  afterId?: number,
  limit?: number,
): Promise<EventRow[]> {
  const { rows } = await db.query<EventRecord>(
    `SELECT id, session_id, kind, data, created_at FROM events
     WHERE session_id = $1 AND ($2::bigint IS NULL OR id > $2::bigint)
     ORDER BY id
     LIMIT $3`,
    [sessionId, afterId ?? null, limit ?? null],
  );
  return rows.map(toEvent);
}

/** How many events of any session have an id in (afterId, upToId]. */
export async function countEventsInRange(db: SqlExecutor, afterId: number, upToId: number): Promise<number> {
  const { rows } = await db.query<{ count: string | number }>(
    'SELECT count(*) AS count FROM events WHERE id > $1::bigint AND id <= $2::bigint',
    [afterId, upToId],
  );
  return Number(rows[0].count);
}
