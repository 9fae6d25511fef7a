/**
 * A tool result written whole: spool row, event and message, all or nothing (issue 9, item 7). A
 * result small enough to go without a spool row is one statement; a spooled one is a transaction,
 * since its message names the spool row's id.
 */
import { storeKeys } from '../core/store-keys';
import { storableText } from '../core/text';
import { jsonText, type MessageRecord, toEntry, toJson } from './rows';
import type { SqlClient, SqlExecutor } from './sql';
import type { RecordedToolResult, ToolResultFacts, ToolResultRecord } from './types';

/** Thrown inside the transaction when another attempt's result message appeared meanwhile. */
export class ToolResultStoredMeanwhile extends Error {}

/**
 * The stored result of a tool call, facts included, or null. The facts live in the tool event
 * today; once messages have their `meta` column they are read from the message row instead.
 */
export async function storedToolResult(
  db: SqlExecutor,
  record: ToolResultRecord,
): Promise<RecordedToolResult | null> {
  const { rows } = await db.query<MessageRecord>(
    'SELECT seq, key, role, content, meta FROM messages WHERE session_id = $1 AND key = $2',
    [record.sessionId, record.messageKey],
  );
  if (rows.length === 0) return null;
  const entry = toEntry(rows[0]);
  // The facts are beside the message; results stored before that kept them in the tool event only.
  let data = (entry.meta?.tool ?? null) as Partial<ToolResultFacts> | null;
  if (!data) {
    const events = await db.query<{ data: Partial<ToolResultFacts> | null }>(
      'SELECT data FROM events WHERE session_id = $1 AND key = $2',
      [record.sessionId, record.eventKey],
    );
    data = events.rows[0]?.data ?? {};
  }
  const part = entry.message.role === 'tool' ? entry.message.content[0] : undefined;
  const facts: ToolResultFacts = {
    ok: data.ok ?? part?.output.type === 'text',
    changedWorkspace: data.changedWorkspace ?? true,
    bytes: data.bytes ?? 0,
    ...(data.chars !== undefined ? { chars: data.chars } : {}),
    ...(data.spoolId !== undefined && data.spoolId !== null ? { spoolId: data.spoolId } : {}),
    lines: data.lines ?? 0,
    firstLine: data.firstLine ?? '',
    lastLine: data.lastLine ?? '',
    argsDigest: data.argsDigest ?? '',
  };
  return { seq: entry.seq, created: false, message: entry.message, facts };
}

/**
 * Records a tool's result once (in one statement, or writeToolResult in a transaction); when a
 * concurrent attempt stored it first, returns that attempt's result.
 */
export async function recordToolResult(
  client: SqlClient,
  record: ToolResultRecord,
): Promise<RecordedToolResult> {
  if (record.spoolContent === undefined) {
    const written = await insertUnspooledResult(client, record);
    if (written) return written;
    // The key was taken: a separate statement sees the attempt that committed it meanwhile.
    const stored = await storedToolResult(client, record);
    if (!stored) throw new Error(`Tool result ${record.messageKey} of ${record.sessionId} vanished.`);
    return stored;
  }
  try {
    return await client.transaction((tx) => writeToolResult(tx, record));
  } catch (error) {
    // A concurrent attempt stored the result first; ours was rolled back whole. Return theirs.
    if (!(error instanceof ToolResultStoredMeanwhile)) throw error;
    const stored = await storedToolResult(client, record);
    if (!stored) throw new Error(`Tool result ${record.messageKey} of ${record.sessionId} vanished.`);
    return stored;
  }
}

/**
 * Event and message of a result without a spool row, in one statement (one round trip where the
 * transaction took five, on every tool call's path). The event is written only with the message:
 * when the key is taken, another attempt's result stands and nothing of this one lands. Null then.
 */
async function insertUnspooledResult(
  db: SqlExecutor,
  record: ToolResultRecord,
): Promise<RecordedToolResult | null> {
  const facts: ToolResultFacts = { ...record.facts };
  const message = record.message(undefined);
  // An event already under this key has no message (the insert found none): a store that wrote them
  // apart died in between. It describes a result nobody saw, so this attempt's facts replace it.
  const { rows } = await db.query<{ seq: string | number }>(
    `WITH inserted AS (
       INSERT INTO messages (session_id, key, role, content, meta)
       VALUES ($1, $2, $3, $4::jsonb, $5::jsonb)
       ON CONFLICT (session_id, key) DO NOTHING
       RETURNING seq
     ),
     logged AS (
       INSERT INTO events (session_id, kind, key, data)
       SELECT $1, 'tool', $6, $7::jsonb FROM inserted
       ON CONFLICT (session_id, key) DO UPDATE SET data = EXCLUDED.data
     )
     SELECT seq FROM inserted`,
    [
      record.sessionId,
      record.messageKey,
      message.role,
      jsonText(message.content),
      toJson({ tool: facts }),
      record.eventKey,
      toJson(toolEventData(record, facts)),
    ],
  );
  if (rows.length === 0) return null;
  return { seq: Number(rows[0].seq), created: true, message, facts };
}

/** What the tool event says: the call, the facts of its result, and what the caller adds. */
function toolEventData(record: ToolResultRecord, facts: ToolResultFacts): Record<string, unknown> {
  return { toolCallId: record.toolCallId, toolName: record.toolName, ...facts, ...record.eventExtra };
}

/** Spool row, event, message: all or nothing (issue 9, item 7). */
export async function writeToolResult(
  tx: SqlExecutor,
  record: ToolResultRecord,
): Promise<RecordedToolResult> {
  const earlier = await storedToolResult(tx, record);
  if (earlier) return earlier;
  let spoolId: number | undefined;
  if (record.spoolContent !== undefined) {
    spoolId = await insertSpool(tx, record, storeKeys.spool(record.toolCallId));
    if (spoolId === undefined) {
      // The key is taken: either a concurrent attempt committed its whole result (return that),
      // or a spool row without a message was left by a store that wrote them apart.
      if (await storedToolResult(tx, record)) throw new ToolResultStoredMeanwhile();
      spoolId = await insertSpool(
        tx,
        record,
        storeKeys.spoolBeside(record.toolCallId, Date.now().toString(36)),
      );
      if (spoolId === undefined) throw new ToolResultStoredMeanwhile();
    }
  }
  const facts: ToolResultFacts = { ...record.facts, ...(spoolId !== undefined ? { spoolId } : {}) };
  const message = record.message(spoolId);
  // An event already under this key has no message (we checked): a store that wrote them apart
  // died in between. It describes a result nobody saw, so this attempt's facts replace it.
  await tx.query(
    `INSERT INTO events (session_id, kind, key, data)
     VALUES ($1, 'tool', $2, $3::jsonb)
     ON CONFLICT (session_id, key) DO UPDATE SET data = EXCLUDED.data`,
    [record.sessionId, record.eventKey, toJson(toolEventData(record, facts))],
  );
  // The facts go beside the message too: the context builder renders stubs from them.
  const inserted = await tx.query<{ seq: string | number }>(
    `INSERT INTO messages (session_id, key, role, content, meta)
     VALUES ($1, $2, $3, $4::jsonb, $5::jsonb)
     ON CONFLICT (session_id, key) DO NOTHING
     RETURNING seq`,
    [record.sessionId, record.messageKey, message.role, jsonText(message.content), toJson({ tool: facts })],
  );
  if (inserted.rows.length === 0) throw new ToolResultStoredMeanwhile();
  return { seq: Number(inserted.rows[0].seq), created: true, message, facts };
}

/** Inserts a spool row under a key; undefined when the key is taken. */
export async function insertSpool(
  tx: SqlExecutor,
  record: ToolResultRecord,
  key: string,
): Promise<number | undefined> {
  // Sized as stored: NUL is stored as U+FFFD (core/text storableText), so the byte offsets hold.
  const content = storableText(record.spoolContent ?? '');
  const { rows } = await tx.query<{ id: string | number }>(
    `INSERT INTO spool (session_id, key, tool_name, content, size_bytes)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (session_id, key) DO NOTHING
     RETURNING id`,
    [record.sessionId, key, record.toolName, content, Buffer.byteLength(content, 'utf8')],
  );
  return rows.length > 0 ? Number(rows[0].id) : undefined;
}
