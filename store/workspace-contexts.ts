/**
 * What the tool host gathered about the workspace for each execution of a session (instructions, MCP
 * tools). Written before the session row exists, so the table has no foreign key to sessions.
 */
import { toJson } from './rows';
import type { SqlExecutor } from './sql';

/**
 * Stores one execution's workspace context once; a retried activity finds the row there, writes
 * nothing and gets the stored data back.
 */
export async function saveWorkspaceContext(
  db: SqlExecutor,
  sessionId: string,
  execution: number,
  data: unknown,
): Promise<{ data: unknown; created: boolean }> {
  const inserted = await db.query<{ data: unknown }>(
    `INSERT INTO workspace_contexts (session_id, execution, data) VALUES ($1, $2, $3::jsonb)
     ON CONFLICT (session_id, execution) DO NOTHING
     RETURNING data`,
    [sessionId, execution, toJson(data)],
  );
  if (inserted.rows.length > 0) return { data: inserted.rows[0].data, created: true };
  const { rows } = await db.query<{ data: unknown }>(
    'SELECT data FROM workspace_contexts WHERE session_id = $1 AND execution = $2',
    [sessionId, execution],
  );
  return { data: rows[0]?.data ?? data, created: false };
}

/** The session's newest workspace context (its highest execution), or null. */
export async function latestWorkspaceContext(
  db: SqlExecutor,
  sessionId: string,
): Promise<{ execution: number; data: unknown } | null> {
  const { rows } = await db.query<{ execution: number; data: unknown }>(
    `SELECT execution, data FROM workspace_contexts WHERE session_id = $1
     ORDER BY execution DESC LIMIT 1`,
    [sessionId],
  );
  return rows.length > 0 ? { execution: Number(rows[0].execution), data: rows[0].data } : null;
}
