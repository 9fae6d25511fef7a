/** The message, event and goal-state writes that several store operations share. */
import type { MessageMeta, StoredMessage } from '../core/messages';
import { applyStateWrite, type StateWrite } from '../core/state-write';
import { jsonText, toJson } from './rows';
import type { SqlExecutor } from './sql';
import type { GoalStatus } from './types';

/** Inserts a message once under its key; a second insert returns the first row's seq. */
export async function insertMessage(
  db: SqlExecutor,
  sessionId: string,
  key: string,
  message: StoredMessage,
  meta: MessageMeta | undefined,
): Promise<{ seq: number; created: boolean }> {
  // Two statements, not one: a racing insert of the same key that commits while our INSERT waits is
  // invisible to that statement's snapshot but visible to the next statement's.
  const inserted = await db.query<{ seq: string | number }>(
    `INSERT INTO messages (session_id, key, role, content, meta)
     VALUES ($1, $2, $3, $4::jsonb, $5::jsonb)
     ON CONFLICT (session_id, key) DO NOTHING
     RETURNING seq`,
    [sessionId, key, message.role, jsonText(message.content), toJson(meta)],
  );
  if (inserted.rows.length > 0) return { seq: Number(inserted.rows[0].seq), created: true };
  return { seq: await existingSeq(db, sessionId, key), created: false };
}

/** The seq of a message whose insert found its key taken. */
export async function existingSeq(db: SqlExecutor, sessionId: string, key: string): Promise<number> {
  const existing = await db.query<{ seq: string | number }>(
    'SELECT seq FROM messages WHERE session_id = $1 AND key = $2',
    [sessionId, key],
  );
  if (existing.rows.length === 0) {
    throw new Error(`Message ${key} of session ${sessionId} was neither inserted nor found.`);
  }
  return Number(existing.rows[0].seq);
}

export async function insertEvent(
  db: SqlExecutor,
  sessionId: string,
  event: { kind: string; data: unknown; key?: string },
): Promise<void> {
  await db.query(
    `INSERT INTO events (session_id, kind, key, data)
     VALUES ($1, $2, $3, $4::jsonb)
     ON CONFLICT (session_id, key) DO NOTHING`,
    [sessionId, event.kind, event.key ?? null, toJson(event.data)],
  );
}

/**
 * Merges a state write into the session's saved state under a row lock, mirrors status and reason on
 * the row, and keeps a checkpoint row for a full write.
 */
export async function applyGoalStateWrite(
  db: SqlExecutor,
  sessionId: string,
  write: StateWrite,
): Promise<void> {
  const { rows } = await db.query<{ goal_state: Record<string, unknown> | null }>(
    'SELECT goal_state FROM sessions WHERE id = $1 FOR UPDATE',
    [sessionId],
  );
  if (rows.length === 0) throw new Error(`session ${sessionId} is not in the store`);
  const next = applyStateWrite(rows[0].goal_state, write);
  const status = write.status ?? (next.status as GoalStatus | undefined);
  const reason = write.reason !== undefined ? write.reason : (next.reason as string | null | undefined);
  await db.query(
    `UPDATE sessions SET goal_state = $2::jsonb, status = coalesce($3, status), reason = $4, updated_at = now()
     WHERE id = $1`,
    [sessionId, jsonText(next), status ?? null, reason ?? null],
  );
  if (write.full) {
    await db.query(
      'INSERT INTO checkpoints (session_id, goal_state, tasks) VALUES ($1, $2::jsonb, $3::jsonb)',
      [sessionId, jsonText(next), toJson(next.tasks)],
    );
  }
}
