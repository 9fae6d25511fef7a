/**
 * One active operation per session (issue 17, F-SESSION): starting, resuming, forking and cleaning a
 * session each hold a row of session_locks while they run. A row, not a PostgreSQL advisory lock: the
 * store is used through a connection pool, and a session-level advisory lock belongs to one connection.
 * The row has a lease (expires_at), so a process that died holding it does not block the session for good.
 */
import type { SqlExecutor } from './sql';

/** Who holds a session's lock, when someone else does. */
export interface SessionLockHolder {
  operation: string;
  holder: string;
  acquiredAt: Date;
}

/** Result of tryLockSession. */
export type SessionLockAttempt = { acquired: true } | { acquired: false; heldBy: SessionLockHolder };

/**
 * Takes the session's lock for `ttlMs` unless another holder has it and its lease has not run out.
 * Taking it again as the same holder renews the lease.
 */
export async function tryLockSession(
  db: SqlExecutor,
  sessionId: string,
  operation: string,
  holder: string,
  ttlMs: number,
): Promise<SessionLockAttempt> {
  const { rows } = await db.query<{ session_id: string }>(
    `INSERT INTO session_locks (session_id, operation, holder, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4::double precision / 1000))
     ON CONFLICT (session_id) DO UPDATE
       SET operation = EXCLUDED.operation, holder = EXCLUDED.holder,
           acquired_at = now(), expires_at = EXCLUDED.expires_at
       WHERE session_locks.expires_at < now() OR session_locks.holder = EXCLUDED.holder
     RETURNING session_id`,
    [sessionId, operation, holder, ttlMs],
  );
  if (rows.length > 0) return { acquired: true };
  const held = await db.query<{ operation: string; holder: string; acquired_at: Date }>(
    'SELECT operation, holder, acquired_at FROM session_locks WHERE session_id = $1',
    [sessionId],
  );
  const row = held.rows[0];
  // Released between the two statements: the caller tries again.
  if (!row) return { acquired: false, heldBy: { operation: 'nothing', holder: '', acquiredAt: new Date() } };
  return {
    acquired: false,
    heldBy: { operation: row.operation, holder: row.holder, acquiredAt: row.acquired_at },
  };
}

/** Gives the lock back, if this holder still has it. */
export async function unlockSession(db: SqlExecutor, sessionId: string, holder: string): Promise<void> {
  await db.query('DELETE FROM session_locks WHERE session_id = $1 AND holder = $2', [sessionId, holder]);
}
