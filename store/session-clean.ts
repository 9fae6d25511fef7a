/** Removing a stopped session's bulk for `goalrun clean` (issue 17, retention), in the caller's transaction. */
import type { SqlExecutor } from './sql';

/** The tables whose rows of a session clean removes. */
export const CLEANED_TABLES = [
  'messages',
  'events',
  'spool',
  'checkpoints',
  'workspace_contexts',
  'session_locks',
  'stream_deltas',
  'stream_watchers',
  'images',
] as const;

/**
 * Locks the session row, checks it is still stopped and not cleaned, then deletes its rows from
 * every CLEANED_TABLES table and marks the row cleaned (its goal state and name dropped, so the name
 * can be used again). Returns false, having changed nothing, when the session is not cleanable.
 */
export async function cleanSession(
  tx: SqlExecutor,
  id: string,
  cleanableStatuses: readonly string[],
): Promise<boolean> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM sessions WHERE id = $1 AND cleaned_at IS NULL AND status = ANY($2::text[]) FOR UPDATE`,
    [id, cleanableStatuses],
  );
  if (rows.length === 0) return false;
  for (const table of CLEANED_TABLES) await tx.query(`DELETE FROM ${table} WHERE session_id = $1`, [id]);
  await tx.query(
    'UPDATE sessions SET cleaned_at = now(), goal_state = NULL, name = NULL, updated_at = now() WHERE id = $1',
    [id],
  );
  return true;
}
