/**
 * What a model step reads before it calls the model, and the event that announces it, as one
 * statement: the answer an earlier attempt stored, the session, and whether someone watches the
 * stream. Four round trips were on every step's path; this is one.
 */
import { type MessageRecord, SESSION_COLUMNS, type SessionRecord, toEntry, toJson, toSession } from './rows';
import type { SqlExecutor } from './sql';
import type { StepOpening, StoreEvent } from './types';

/** The columns of the stored answer, renamed so that they cannot meet the session's. */
const ANSWER_COLUMNS =
  'seq AS answer_seq, key AS answer_key, role AS answer_role, content AS answer_content, meta AS answer_meta';

type OpeningRecord = Partial<SessionRecord> & {
  answer_seq: string | number | null;
  answer_key: string | null;
  answer_role: MessageRecord['role'] | null;
  answer_content: MessageRecord['content'] | null;
  answer_meta: MessageRecord['meta'];
  watched: boolean | null;
};

/**
 * Reads the answer stored under `answerKey`, the session and its watch, and logs `event` once
 * (keyed) when the session exists and the answer is not stored yet: a step whose answer is stored
 * was announced by the attempt that stored it (perhaps under another key, by an older build).
 */
export async function openStep(
  db: SqlExecutor,
  sessionId: string,
  answerKey: string,
  event: StoreEvent & { key: string },
): Promise<StepOpening> {
  const { rows } = await db.query<OpeningRecord>(
    `WITH logged AS (
       INSERT INTO events (session_id, kind, key, data)
       SELECT $1, $3, $4, $5::jsonb
       WHERE EXISTS (SELECT 1 FROM sessions WHERE id = $1)
         AND NOT EXISTS (SELECT 1 FROM messages WHERE session_id = $1 AND key = $2)
       ON CONFLICT (session_id, key) DO NOTHING
     )
     SELECT session.*, answer.*, watch.watched
     FROM (SELECT 1) AS one
     LEFT JOIN (SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1) AS session ON true
     LEFT JOIN (SELECT ${ANSWER_COLUMNS} FROM messages WHERE session_id = $1 AND key = $2) AS answer ON true
     LEFT JOIN (SELECT until > now() AS watched FROM stream_watchers WHERE session_id = $1) AS watch ON true`,
    [sessionId, answerKey, event.kind, event.key, toJson(event.data)],
  );
  const row = rows[0];
  const stored =
    row?.answer_seq != null && row.answer_key !== null && row.answer_role !== null
      ? toEntry({
          seq: row.answer_seq,
          key: row.answer_key,
          role: row.answer_role,
          content: row.answer_content ?? [],
          meta: row.answer_meta,
        })
      : null;
  const session = row?.id ? toSession(row as SessionRecord) : null;
  return { stored, session, watched: row?.watched === true };
}
