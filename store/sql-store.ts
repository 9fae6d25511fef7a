import type { MessageMeta, StoredMessage, TranscriptEntry } from '../core/messages';
import { applyStateWrite, type StateWrite } from '../core/state-write';
import { storeKeys } from '../core/store-keys';
import { canWriteInOneStatement, insertMessageWithEffects, writeStateWithEvents } from './effects-write';
import type { SqlClient, SqlExecutor } from './sql';
import type {
  CheckpointRow,
  EventRow,
  GoalStatus,
  MessageWriteOptions,
  NewSession,
  RecordedToolResult,
  SessionRow,
  SessionStore,
  SpoolPage,
  ToolResultFacts,
  ToolResultRecord,
} from './types';

/** Sessions that `listSessions` returns when the caller names no limit. */
export const DEFAULT_SESSION_LIST_LIMIT = 100;

/** A UTF-8 character is at most 4 bytes, so a character boundary is at most 3 bytes before any position. */
const MAX_UTF8_CONTINUATION_BYTES = 3;

const SESSION_COLUMNS =
  'id, project_dir, project_hash, objective, status, reason, model, workflow_id, goal_state, name, created_at, updated_at';

interface SessionRecord {
  id: string;
  project_dir: string;
  project_hash: string;
  objective: string;
  status: GoalStatus;
  reason: string | null;
  model: string;
  workflow_id: string;
  goal_state: unknown;
  name: string | null;
  created_at: Date;
  updated_at: Date;
}

interface MessageRecord {
  // bigint columns come back as strings from pg.
  seq: string | number;
  key: string;
  role: StoredMessage['role'];
  content: StoredMessage['content'];
  meta: MessageMeta | null;
}

interface EventRecord {
  id: string | number;
  session_id: string;
  kind: string;
  data: unknown;
  created_at: Date;
}

interface CheckpointRecord {
  id: string | number;
  session_id: string;
  goal_state: unknown;
  tasks: unknown;
  created_at: Date;
}

interface SpoolSliceRecord {
  id: string | number;
  tool_name: string;
  size_bytes: string | number;
  // bytea: a Buffer from pg.
  chunk: Uint8Array | null;
}

/** The session store over PostgreSQL (a server of the user's, or the embedded one). */
export class SqlSessionStore implements SessionStore {
  constructor(private readonly client: SqlClient) {}

  async createSession(session: NewSession): Promise<void> {
    await this.client.query(
      `INSERT INTO sessions (id, project_dir, project_hash, objective, model, workflow_id)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO NOTHING`,
      [
        session.id,
        session.projectDir,
        session.projectHash,
        session.objective,
        session.model,
        session.workflowId,
      ],
    );
  }

  async getSession(id: string): Promise<SessionRow | null> {
    const { rows } = await this.client.query<SessionRecord>(
      `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`,
      [id],
    );
    return rows.length > 0 ? toSession(rows[0]) : null;
  }

  async findSession(idOrWorkflowId: string): Promise<SessionRow | null> {
    // A session id wins over a workflow id that happens to be spelled the same.
    const { rows } = await this.client.query<SessionRecord>(
      `SELECT ${SESSION_COLUMNS} FROM sessions
       WHERE id = $1 OR workflow_id = $1
       ORDER BY (id = $1) DESC, created_at DESC
       LIMIT 1`,
      [idOrWorkflowId],
    );
    return rows.length > 0 ? toSession(rows[0]) : null;
  }

  async listSessions(limit = DEFAULT_SESSION_LIST_LIMIT): Promise<SessionRow[]> {
    const { rows } = await this.client.query<SessionRecord>(
      `SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY created_at DESC, id DESC LIMIT $1`,
      [limit],
    );
    return rows.map(toSession);
  }

  async updateSession(
    id: string,
    patch: { status?: GoalStatus; reason?: string | null; goalState?: unknown; model?: string },
  ): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    const set = (column: string, value: unknown, cast = '') => {
      params.push(value);
      sets.push(`${column} = $${params.length}${cast}`);
    };
    if (patch.status !== undefined) set('status', patch.status);
    if (patch.reason !== undefined) set('reason', patch.reason);
    if (patch.model !== undefined) set('model', patch.model);
    if (patch.goalState !== undefined) set('goal_state', toJson(patch.goalState), '::jsonb');
    sets.push('updated_at = now()');
    await this.client.query(`UPDATE sessions SET ${sets.join(', ')} WHERE id = $1`, params);
  }

  async deleteSession(id: string): Promise<void> {
    // Every child table references sessions with ON DELETE CASCADE.
    await this.client.query('DELETE FROM sessions WHERE id = $1', [id]);
  }

  async appendMessage(
    sessionId: string,
    key: string,
    message: StoredMessage,
    options: MessageWriteOptions = {},
  ): Promise<{ seq: number; created: boolean }> {
    if (!options.state && !options.event)
      return insertMessage(this.client, sessionId, key, message, options.meta);
    const events = [options.event ?? []].flat();
    if (canWriteInOneStatement(options.state)) {
      const { seq } = await insertMessageWithEffects(
        this.client,
        {
          sessionId,
          key,
          role: message.role,
          content: JSON.stringify(message.content),
          meta: toJson(options.meta),
        },
        options.state,
        events,
      );
      if (seq !== null) return { seq, created: true };
      // The key was taken. A separate statement sees a racing insert that committed meanwhile.
      return { seq: await existingSeq(this.client, sessionId, key), created: false };
    }
    // The message, the state that accounts for it and its event commit together or not at all.
    return this.client.transaction(async (tx) => {
      const result = await insertMessage(tx, sessionId, key, message, options.meta);
      if (options.state) await applyGoalStateWrite(tx, sessionId, options.state);
      for (const event of [options.event ?? []].flat()) await insertEvent(tx, sessionId, event);
      return result;
    });
  }

  async writeGoalState(
    sessionId: string,
    write: StateWrite,
    event?: MessageWriteOptions['event'],
  ): Promise<void> {
    if (canWriteInOneStatement(write)) {
      const changed = await writeStateWithEvents(this.client, sessionId, write, [event ?? []].flat());
      if (changed === 0) throw new Error(`session ${sessionId} is not in the store`);
      return;
    }
    await this.client.transaction(async (tx) => {
      await applyGoalStateWrite(tx, sessionId, write);
      for (const each of [event ?? []].flat()) await insertEvent(tx, sessionId, each);
    });
  }

  async renameSession(id: string, name: string): Promise<void> {
    await this.client.query('UPDATE sessions SET name = $2, updated_at = now() WHERE id = $1', [id, name]);
  }

  async lastEventId(sessionId: string): Promise<number> {
    const { rows } = await this.client.query<{ id: string | number | null }>(
      'SELECT max(id) AS id FROM events WHERE session_id = $1',
      [sessionId],
    );
    return Number(rows[0]?.id ?? 0);
  }

  async getEventByKey(sessionId: string, key: string): Promise<EventRow | null> {
    const { rows } = await this.client.query<EventRecord>(
      'SELECT id, session_id, kind, data, created_at FROM events WHERE session_id = $1 AND key = $2',
      [sessionId, key],
    );
    return rows.length > 0 ? toEvent(rows[0]) : null;
  }

  async existingMessageKeys(sessionId: string, keys: string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const { rows } = await this.client.query<{ key: string }>(
      'SELECT key FROM messages WHERE session_id = $1 AND key = ANY($2::text[])',
      [sessionId, keys],
    );
    return new Set(rows.map((row) => row.key));
  }

  async getMessageByKey(sessionId: string, key: string): Promise<TranscriptEntry | null> {
    const { rows } = await this.client.query<MessageRecord>(
      'SELECT seq, key, role, content, meta FROM messages WHERE session_id = $1 AND key = $2',
      [sessionId, key],
    );
    return rows.length > 0 ? toEntry(rows[0]) : null;
  }

  async listMessages(
    sessionId: string,
    range?: { fromSeq?: number; toSeq?: number },
  ): Promise<TranscriptEntry[]> {
    const { rows } = await this.client.query<MessageRecord>(
      `SELECT seq, key, role, content, meta FROM messages
       WHERE session_id = $1
         AND ($2::bigint IS NULL OR seq >= $2::bigint)
         AND ($3::bigint IS NULL OR seq <= $3::bigint)
       ORDER BY seq`,
      [sessionId, range?.fromSeq ?? null, range?.toSeq ?? null],
    );
    return rows.map(toEntry);
  }

  async listMessagesForContext(
    sessionId: string,
    seqs: number[],
    fromSeq: number,
    toSeq: number,
  ): Promise<TranscriptEntry[]> {
    const { rows } = await this.client.query<MessageRecord>(
      `SELECT seq, key, role, content, meta FROM messages
       WHERE session_id = $1 AND (seq = ANY($2::bigint[]) OR (seq >= $3::bigint AND seq <= $4::bigint))
       ORDER BY seq`,
      [sessionId, seqs, fromSeq, toSeq],
    );
    return rows.map(toEntry);
  }

  async countMessages(sessionId: string): Promise<number> {
    const { rows } = await this.client.query<{ count: string | number }>(
      'SELECT count(*) AS count FROM messages WHERE session_id = $1',
      [sessionId],
    );
    return Number(rows[0].count);
  }

  async appendEvent(sessionId: string, kind: string, data: unknown, key?: string): Promise<void> {
    await insertEvent(this.client, sessionId, { kind, data, key });
  }

  async listEvents(sessionId: string, afterId?: number, limit?: number): Promise<EventRow[]> {
    const { rows } = await this.client.query<EventRecord>(
      `SELECT id, session_id, kind, data, created_at FROM events
       WHERE session_id = $1 AND ($2::bigint IS NULL OR id > $2::bigint)
       ORDER BY id
       LIMIT $3`,
      [sessionId, afterId ?? null, limit ?? null],
    );
    return rows.map(toEvent);
  }

  async countEventsInRange(afterId: number, upToId: number): Promise<number> {
    const { rows } = await this.client.query<{ count: string | number }>(
      'SELECT count(*) AS count FROM events WHERE id > $1::bigint AND id <= $2::bigint',
      [afterId, upToId],
    );
    return Number(rows[0].count);
  }

  async writeSpool(
    sessionId: string,
    key: string,
    toolName: string,
    content: string,
  ): Promise<{ spoolId: number }> {
    // Same two-step shape as appendMessage, for the same reason.
    const inserted = await this.client.query<{ id: string | number }>(
      `INSERT INTO spool (session_id, key, tool_name, content, size_bytes)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (session_id, key) DO NOTHING
       RETURNING id`,
      [sessionId, key, toolName, content, Buffer.byteLength(content, 'utf8')],
    );
    if (inserted.rows.length > 0) return { spoolId: Number(inserted.rows[0].id) };
    const existing = await this.client.query<{ id: string | number }>(
      'SELECT id FROM spool WHERE session_id = $1 AND key = $2',
      [sessionId, key],
    );
    if (existing.rows.length === 0) {
      throw new Error(`Spool entry ${key} of session ${sessionId} was neither inserted nor found.`);
    }
    return { spoolId: Number(existing.rows[0].id) };
  }

  /**
   * Pages are cut at UTF-8 character boundaries: a start inside a character moves back to its first
   * byte, an end inside one moves back before it, so following `nextOffset` from 0 yields pages that
   * concatenate to the exact original. When `limit` is smaller than the character at the start, the
   * page holds that one character (up to 4 bytes) so that paging always advances.
   */
  async readSpool(
    sessionId: string,
    spoolId: number,
    offset: number,
    limit: number,
  ): Promise<SpoolPage | null> {
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw new RangeError(`Spool offset must be >= 0, got ${offset}`);
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new RangeError(`Spool limit must be >= 1, got ${limit}`);
    // Fetch only the bytes around the page, plus margins to find character boundaries on both sides.
    const windowStart = Math.max(0, offset - MAX_UTF8_CONTINUATION_BYTES);
    const windowEnd = offset + Math.max(limit, MAX_UTF8_CONTINUATION_BYTES + 1) + 1;
    const { rows } = await this.client.query<SpoolSliceRecord>(
      `SELECT id, tool_name, size_bytes,
              substring(convert_to(content, 'UTF8') FROM $3::integer FOR $4::integer) AS chunk
       FROM spool WHERE id = $1 AND session_id = $2`,
      [spoolId, sessionId, windowStart + 1, windowEnd - windowStart],
    );
    if (rows.length === 0) return null;
    const row = rows[0];
    const size = Number(row.size_bytes);
    const bytes = Buffer.from(row.chunk ?? new Uint8Array());
    const page = { spoolId: Number(row.id), toolName: row.tool_name, size };
    if (offset >= size) return { ...page, offset: size, content: '', nextOffset: null };

    const byteAt = (position: number) => bytes[position - windowStart];
    let start = offset;
    while (start > 0 && isContinuationByte(byteAt(start))) start--;
    let end = Math.min(size, start + limit);
    while (end > start && end < size && isContinuationByte(byteAt(end))) end--;
    if (end === start) {
      end = start + 1;
      while (end < size && isContinuationByte(byteAt(end))) end++;
    }
    return {
      ...page,
      offset: start,
      content: bytes.subarray(start - windowStart, end - windowStart).toString('utf8'),
      nextOffset: end < size ? end : null,
    };
  }

  async recordToolResult(record: ToolResultRecord): Promise<RecordedToolResult> {
    try {
      return await this.client.transaction((tx) => writeToolResult(tx, record));
    } catch (error) {
      // A concurrent attempt stored the result first; ours was rolled back whole. Return theirs.
      if (!(error instanceof ToolResultStoredMeanwhile)) throw error;
      const stored = await storedToolResult(this.client, record);
      if (!stored) throw new Error(`Tool result ${record.messageKey} of ${record.sessionId} vanished.`);
      return stored;
    }
  }

  async saveCheckpoint(sessionId: string, goalState: unknown, tasks: unknown): Promise<void> {
    await this.client.query(
      'INSERT INTO checkpoints (session_id, goal_state, tasks) VALUES ($1, $2::jsonb, $3::jsonb)',
      [sessionId, toJson(goalState), toJson(tasks)],
    );
  }

  async latestCheckpoint(sessionId: string): Promise<CheckpointRow | null> {
    const { rows } = await this.client.query<CheckpointRecord>(
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

  async close(): Promise<void> {
    await this.client.close();
  }

  async storeId(): Promise<string> {
    const { rows } = await this.client.query<{ store_id: string }>('SELECT store_id FROM goalrun_store');
    if (rows.length === 0) throw new Error('the session store has no identity row (migration 2 did not run)');
    return rows[0].store_id;
  }

  async findSessionsByPrefix(prefix: string, limit: number): Promise<SessionRow[]> {
    // LIKE treats % and _ as wildcards; a prefix is matched literally.
    const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const { rows } = await this.client.query<SessionRecord>(
      `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id LIKE $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [pattern, limit],
    );
    return rows.map(toSession);
  }

  async latestSessionOfProject(projectHash: string): Promise<SessionRow | null> {
    const { rows } = await this.client.query<SessionRecord>(
      `SELECT ${SESSION_COLUMNS} FROM sessions WHERE project_hash = $1 ORDER BY created_at DESC, id DESC LIMIT 1`,
      [projectHash],
    );
    return rows.length > 0 ? toSession(rows[0]) : null;
  }
}

/**
 * JSON text for a jsonb parameter. Serialized here, not by the driver, because pg turns a JS array
 * into a PostgreSQL array literal. undefined and null become SQL NULL, which reads back as null.
 */
function toJson(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

function isContinuationByte(byte: number | undefined): boolean {
  // UTF-8 continuation bytes are 10xxxxxx.
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** Inserts a message once under its key; a second insert returns the first row's seq. */
async function insertMessage(
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
    [sessionId, key, message.role, JSON.stringify(message.content), toJson(meta)],
  );
  if (inserted.rows.length > 0) return { seq: Number(inserted.rows[0].seq), created: true };
  return { seq: await existingSeq(db, sessionId, key), created: false };
}

/** The seq of a message whose insert found its key taken. */
async function existingSeq(db: SqlExecutor, sessionId: string, key: string): Promise<number> {
  const existing = await db.query<{ seq: string | number }>(
    'SELECT seq FROM messages WHERE session_id = $1 AND key = $2',
    [sessionId, key],
  );
  if (existing.rows.length === 0) {
    throw new Error(`Message ${key} of session ${sessionId} was neither inserted nor found.`);
  }
  return Number(existing.rows[0].seq);
}

async function insertEvent(
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
async function applyGoalStateWrite(db: SqlExecutor, sessionId: string, write: StateWrite): Promise<void> {
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
    [sessionId, JSON.stringify(next), status ?? null, reason ?? null],
  );
  if (write.full) {
    await db.query(
      'INSERT INTO checkpoints (session_id, goal_state, tasks) VALUES ($1, $2::jsonb, $3::jsonb)',
      [sessionId, JSON.stringify(next), toJson(next.tasks)],
    );
  }
}

function toEvent(row: EventRecord): EventRow {
  return {
    id: Number(row.id),
    sessionId: row.session_id,
    kind: row.kind,
    data: row.data,
    createdAt: row.created_at,
  };
}

function toSession(row: SessionRecord): SessionRow {
  return {
    id: row.id,
    projectDir: row.project_dir,
    projectHash: row.project_hash,
    objective: row.objective,
    status: row.status,
    reason: row.reason,
    model: row.model,
    workflowId: row.workflow_id,
    goalState: row.goal_state ?? null,
    name: row.name ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toEntry(row: MessageRecord): TranscriptEntry {
  return {
    seq: Number(row.seq),
    key: row.key,
    message: { role: row.role, content: row.content } as StoredMessage,
    ...(row.meta ? { meta: row.meta } : {}),
  };
}

/** Thrown inside the transaction when another attempt's result message appeared meanwhile. */
class ToolResultStoredMeanwhile extends Error {}

/**
 * The stored result of a tool call, facts included, or null. The facts live in the tool event
 * today; once messages have their `meta` column they are read from the message row instead.
 */
async function storedToolResult(
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

/** Spool row, event, message: all or nothing (issue 9, item 7). */
async function writeToolResult(tx: SqlExecutor, record: ToolResultRecord): Promise<RecordedToolResult> {
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
    [
      record.sessionId,
      record.eventKey,
      toJson({ toolCallId: record.toolCallId, toolName: record.toolName, ...facts, ...record.eventExtra }),
    ],
  );
  // The facts go beside the message too: the context builder renders stubs from them.
  const inserted = await tx.query<{ seq: string | number }>(
    `INSERT INTO messages (session_id, key, role, content, meta)
     VALUES ($1, $2, $3, $4::jsonb, $5::jsonb)
     ON CONFLICT (session_id, key) DO NOTHING
     RETURNING seq`,
    [
      record.sessionId,
      record.messageKey,
      message.role,
      JSON.stringify(message.content),
      toJson({ tool: facts }),
    ],
  );
  if (inserted.rows.length === 0) throw new ToolResultStoredMeanwhile();
  return { seq: Number(inserted.rows[0].seq), created: true, message, facts };
}

/** Inserts a spool row under a key; undefined when the key is taken. */
async function insertSpool(
  tx: SqlExecutor,
  record: ToolResultRecord,
  key: string,
): Promise<number | undefined> {
  const content = record.spoolContent ?? '';
  const { rows } = await tx.query<{ id: string | number }>(
    `INSERT INTO spool (session_id, key, tool_name, content, size_bytes)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (session_id, key) DO NOTHING
     RETURNING id`,
    [record.sessionId, key, record.toolName, content, Buffer.byteLength(content, 'utf8')],
  );
  return rows.length > 0 ? Number(rows[0].id) : undefined;
}
