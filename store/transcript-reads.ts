/** Reading a session's transcript: its messages by key, by seq range, or counted. */
import type { TranscriptEntry } from '../core/messages';
import { type MessageRecord, toEntry } from './rows';
import type { SqlExecutor } from './sql';

/** Which of these message keys the session already has. */
export async function existingMessageKeys(
  db: SqlExecutor,
  sessionId: string,
  keys: string[],
): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const { rows } = await db.query<{ key: string }>(
    'SELECT key FROM messages WHERE session_id = $1 AND key = ANY($2::text[])',
    [sessionId, keys],
  );
  return new Set(rows.map((row) => row.key));
}

/** The session's message stored under this key, or null. */
export async function getMessageByKey(
  db: SqlExecutor,
  sessionId: string,
  key: string,
): Promise<TranscriptEntry | null> {
  const { rows } = await db.query<MessageRecord>(
    'SELECT seq, key, role, content, meta FROM messages WHERE session_id = $1 AND key = $2',
    [sessionId, key],
  );
  return rows.length > 0 ? toEntry(rows[0]) : null;
}

/** The session's messages stored under these keys, by key: one round trip for several look-ups. */
export async function getMessagesByKeys(
  db: SqlExecutor,
  sessionId: string,
  keys: string[],
): Promise<Map<string, TranscriptEntry>> {
  if (keys.length === 0) return new Map();
  const { rows } = await db.query<MessageRecord>(
    'SELECT seq, key, role, content, meta FROM messages WHERE session_id = $1 AND key = ANY($2::text[])',
    [sessionId, keys],
  );
  return new Map(rows.map((row) => [row.key, toEntry(row)]));
}

/** The session's messages in seq order, within the range when one is given (both ends included). */
export async function listMessages(
  db: SqlExecutor,
  sessionId: string,
  range?: { fromSeq?: number; toSeq?: number },
): Promise<TranscriptEntry[]> {
  const { rows } = await db.query<MessageRecord>(
    `SELECT seq, key, role, content, meta FROM messages
     WHERE session_id = $1
       AND ($2::bigint IS NULL OR seq >= $2::bigint)
       AND ($3::bigint IS NULL OR seq <= $3::bigint)
     ORDER BY seq`,
    [sessionId, range?.fromSeq ?? null, range?.toSeq ?? null],
  );
  return rows.map(toEntry);
}

/** The messages a model context is built from: the ones named by seq plus the range fromSeq..toSeq. */
export async function listMessagesForContext(
  db: SqlExecutor,
  sessionId: string,
  seqs: number[],
  fromSeq: number,
  toSeq: number,
): Promise<TranscriptEntry[]> {
  const { rows } = await db.query<MessageRecord>(
    `SELECT seq, key, role, content, meta FROM messages
     WHERE session_id = $1 AND (seq = ANY($2::bigint[]) OR (seq >= $3::bigint AND seq <= $4::bigint))
     ORDER BY seq`,
    [sessionId, seqs, fromSeq, toSeq],
  );
  return rows.map(toEntry);
}

/** How many messages the session has. */
export async function countMessages(db: SqlExecutor, sessionId: string): Promise<number> {
  const { rows } = await db.query<{ count: string | number }>(
    'SELECT count(*) AS count FROM messages WHERE session_id = $1',
    [sessionId],
  );
  return Number(rows[0].count);
}
