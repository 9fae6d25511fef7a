/** Checkpoint rows: a session's saved goal state and tasks at a point, the newest read back to resume from. */
import { type CheckpointRecord, toJson } from './rows';
import type { SqlExecutor } from './sql';
import type { CheckpointRow } from './types';

/** Adds a checkpoint row of the session's goal state and tasks. */
export async function saveCheckpoint(
  db: SqlExecutor,
  sessionId: string,
  goalState: unknown,
  tasks: unknown,
): Promise<void> {
  await db.query(
    'INSERT INTO checkpoints (session_id, goal_state, tasks) VALUES ($1, $2::jsonb, $3::jsonb)',
    [sessionId, toJson(goalState), toJson(tasks)],
  );
}

/** The session's newest checkpoint, or null. */
export async function latestCheckpoint(db: SqlExecutor, sessionId: string): Promise<CheckpointRow | null> {
  const { rows } = await db.query<CheckpointRecord>(
    `SELECT id, session_id, goal_state, tasks, created_at FROM checkpoints
     WHERE session_id = $1 ORDER BY id DESC LIMIT 1`,
    [sessionId],
  );
  if (rows.length === 0) return null;
  const row = rows[0];
  return {
    id: Number(row.id),
    sessionId: row.session_id,
    goalState: row.goal_state,
    tasks: row.tasks,
    createdAt: row.created_at,
  };
}
