/** Writing a full tool output to the spool, once per key (spec S-SPOOL); spool-read.ts reads it back in pages. */

import { storableText } from '../core/text';
import type { SqlExecutor } from './sql';

/** Stores the output under its key, or finds the row a first call stored; returns its spool id. */
export async function writeSpool(
  db: SqlExecutor,
  sessionId: string,
  key: string,
  toolName: string,
  text: string,
): Promise<{ spoolId: number }> {
  // Sized as stored: NUL is stored as U+FFFD (core/text storableText), so the byte offsets hold.
  const content = storableText(text);
  // Same two-step shape as insertMessage (message-writes.ts), for the same reason: a racing insert
  // that commits while ours waits is invisible to our INSERT but visible to the next statement.
  const inserted = await db.query<{ id: string | number }>(
    `INSERT INTO spool (session_id, key, tool_name, content, size_bytes)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (session_id, key) DO NOTHING
     RETURNING id`,
    [sessionId, key, toolName, content, Buffer.byteLength(content, 'utf8')],
  );
  if (inserted.rows.length > 0) return { spoolId: Number(inserted.rows[0].id) };
  const existing = await db.query<{ id: string | number }>(
    'SELECT id FROM spool WHERE session_id = $1 AND key = $2',
    [sessionId, key],
  );
  if (existing.rows.length === 0) {
    throw new Error(`Spool entry ${key} of session ${sessionId} was neither inserted nor found.`);
  }
  return { spoolId: Number(existing.rows[0].id) };
}
