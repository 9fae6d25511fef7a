/**
 * `--include-partial-messages` (issue 26 item 11): the text of a model step as it streams in, kept
 * apart from the transcript. A CLI that prints partial messages holds a lease on the session
 * (stream_watchers); a model step that finds one writes its text in throttled pieces, which the CLI
 * prints as `text_delta` events. The pieces are best-effort and pruned after a while: the stored
 * answer stays the only record of what the model said. Written before the session row exists, so
 * the tables have no foreign key to sessions.
 */
import type { SqlExecutor } from './sql';

/** Where a piece of streamed text belongs: one attempt of one model step. */
export interface DeltaStep {
  execution: number;
  step: number;
  attempt: number;
}

/** One stored piece of a step's streamed text. */
export interface StreamDelta extends DeltaStep {
  /** 0-based position of the piece in its attempt. */
  seq: number;
  /** Where the piece starts in the attempt's text (UTF-16 code units). */
  offset: number;
  text: string;
}

/** Holds (or renews) the session's partial-messages lease until `untilMs` (a later lease wins). */
export async function watchStream(db: SqlExecutor, sessionId: string, untilMs: number): Promise<void> {
  await db.query(
    `INSERT INTO stream_watchers (session_id, until) VALUES ($1, to_timestamp($2 / 1000.0))
     ON CONFLICT (session_id) DO UPDATE SET until = GREATEST(stream_watchers.until, EXCLUDED.until)`,
    [sessionId, untilMs],
  );
}

/** Whether someone prints the session's partial messages now (a lease that has not run out). */
export async function streamWatched(db: SqlExecutor, sessionId: string): Promise<boolean> {
  const { rows } = await db.query<{ watched: boolean }>(
    'SELECT until > now() AS watched FROM stream_watchers WHERE session_id = $1',
    [sessionId],
  );
  return rows[0]?.watched === true;
}

/** Stores one piece; idempotent on its position. */
export async function insertStreamDelta(
  db: SqlExecutor,
  sessionId: string,
  delta: StreamDelta,
): Promise<void> {
  await db.query(
    `INSERT INTO stream_deltas (session_id, execution, step, attempt, seq, text_offset, text)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (session_id, execution, step, attempt, seq) DO NOTHING`,
    [sessionId, delta.execution, delta.step, delta.attempt, delta.seq, delta.offset, delta.text],
  );
}

/** Deletes the session's pieces older than `keepMs`. */
export async function pruneStreamDeltas(db: SqlExecutor, sessionId: string, keepMs: number): Promise<void> {
  await db.query(
    `DELETE FROM stream_deltas WHERE session_id = $1 AND created_at < now() - make_interval(secs => $2 / 1000.0)`,
    [sessionId, keepMs],
  );
}

/**
 * The pieces of one model step after a position (attempt, seq), in order: attempt by attempt, each
 * attempt's pieces in the order they were written.
 */
export async function listStreamDeltas(
  db: SqlExecutor,
  sessionId: string,
  at: { execution: number; step: number },
  after: { attempt: number; seq: number },
): Promise<StreamDelta[]> {
  const { rows } = await db.query<{
    attempt: number;
    seq: number;
    text_offset: number;
    text: string;
  }>(
    `SELECT attempt, seq, text_offset, text FROM stream_deltas
     WHERE session_id = $1 AND execution = $2 AND step = $3 AND (attempt, seq) > ($4, $5)
     ORDER BY attempt, seq`,
    [sessionId, at.execution, at.step, after.attempt, after.seq],
  );
  return rows.map((row) => ({
    execution: at.execution,
    step: at.step,
    attempt: row.attempt,
    seq: row.seq,
    offset: row.text_offset,
    text: row.text,
  }));
}
