import type { SavedState } from '../core/fork-point';
import type { StoredMessage, TranscriptEntry } from '../core/messages';
import { shortIdOf } from '../core/session-ids';
import type { StateWrite } from '../core/state-write';
import {
  type DailyBudgetView,
  type DailyReservation,
  dailyBudgetView,
  dailyCap,
  reserveDaily,
  setDailyCap,
  settleDaily,
} from './daily-budget';
import { canWriteInOneStatement, insertMessageWithEffects, writeStateWithEvents } from './effects-write';
import { latestRequestTokens, type MemoryMatch, type MemoryQuery, searchMemory } from './memory-search';
import { applyGoalStateWrite, existingSeq, insertEvent, insertMessage } from './message-writes';
import {
  type CheckpointRecord,
  type EventRecord,
  type MessageRecord,
  SESSION_COLUMNS,
  type SessionRecord,
  toEntry,
  toEvent,
  toJson,
  toSession,
} from './rows';
import { cleanSession } from './session-clean';
import { checkpointStates, type ForkRecord, forkSession } from './session-fork';
import { type SessionLockAttempt, tryLockSession, unlockSession } from './session-locks';
import {
  claimSessionName,
  findSessionByName,
  listProjectSessions,
  type NameClaim,
  renameSession,
} from './session-names';
import { readSpoolPage } from './spool-read';
import type { SqlClient } from './sql';
import { storedToolResult, ToolResultStoredMeanwhile, writeToolResult } from './tool-result-writes';
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
  ToolResultRecord,
} from './types';

/** Sessions that `listSessions` returns when the caller names no limit. */
export const DEFAULT_SESSION_LIST_LIMIT = 100;

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
    // Every child table references sessions with ON DELETE CASCADE, but workspace_contexts, which
    // is written before its session row exists.
    await this.client.query('DELETE FROM sessions WHERE id = $1', [id]);
    await this.client.query('DELETE FROM workspace_contexts WHERE session_id = $1', [id]);
  }

  async saveWorkspaceContext(
    sessionId: string,
    execution: number,
    data: unknown,
  ): Promise<{ data: unknown; created: boolean }> {
    const inserted = await this.client.query<{ data: unknown }>(
      `INSERT INTO workspace_contexts (session_id, execution, data) VALUES ($1, $2, $3::jsonb)
       ON CONFLICT (session_id, execution) DO NOTHING
       RETURNING data`,
      [sessionId, execution, toJson(data)],
    );
    if (inserted.rows.length > 0) return { data: inserted.rows[0].data, created: true };
    const { rows } = await this.client.query<{ data: unknown }>(
      'SELECT data FROM workspace_contexts WHERE session_id = $1 AND execution = $2',
      [sessionId, execution],
    );
    return { data: rows[0]?.data ?? data, created: false };
  }

  async latestWorkspaceContext(sessionId: string): Promise<{ execution: number; data: unknown } | null> {
    const { rows } = await this.client.query<{ execution: number; data: unknown }>(
      `SELECT execution, data FROM workspace_contexts WHERE session_id = $1
       ORDER BY execution DESC LIMIT 1`,
      [sessionId],
    );
    return rows.length > 0 ? { execution: Number(rows[0].execution), data: rows[0].data } : null;
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
    await renameSession(this.client, id, name);
  }

  claimSessionName(
    session: NewSession & { name: string },
    lock: { operation: string; holder: string; ttlMs: number },
  ): Promise<NameClaim> {
    return claimSessionName(this.client, session, lock);
  }

  findSessionByName(projectHashes: string[], name: string): Promise<SessionRow | null> {
    return findSessionByName(this.client, projectHashes, name);
  }

  listProjectSessions(projectHashes: string[] | null, limit: number): Promise<SessionRow[]> {
    return listProjectSessions(this.client, projectHashes, limit);
  }

  tryLockSession(
    sessionId: string,
    operation: string,
    holder: string,
    ttlMs: number,
  ): Promise<SessionLockAttempt> {
    return tryLockSession(this.client, sessionId, operation, holder, ttlMs);
  }

  unlockSession(sessionId: string, holder: string): Promise<void> {
    return unlockSession(this.client, sessionId, holder);
  }

  searchMemory(query: MemoryQuery): Promise<MemoryMatch[]> {
    return searchMemory(this.client, query);
  }

  cleanSession(id: string, cleanableStatuses: readonly string[]): Promise<boolean> {
    return this.client.transaction((tx) => cleanSession(tx, id, cleanableStatuses));
  }

  forkSession(record: ForkRecord): Promise<number> {
    return this.client.transaction((tx) => forkSession(tx, record));
  }

  checkpointStates(sessionId: string): Promise<SavedState[]> {
    return checkpointStates(this.client, sessionId);
  }

  latestRequestTokens(sessionId: string): Promise<number | null> {
    return latestRequestTokens(this.client, sessionId);
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

  async lastEventAt(sessionId: string, kinds: string[]): Promise<Date | null> {
    const { rows } = await this.client.query<{ at: Date | string | null }>(
      'SELECT max(created_at) AS at FROM events WHERE session_id = $1 AND kind = ANY($2::text[])',
      [sessionId, kinds],
    );
    const at = rows[0]?.at;
    return at ? new Date(at) : null;
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

  /** Pages cut at UTF-8 character boundaries (see spool-read.ts). */
  async readSpool(
    sessionId: string,
    spoolId: number,
    offset: number,
    limit: number,
  ): Promise<SpoolPage | null> {
    return readSpoolPage(this.client, sessionId, spoolId, offset, limit);
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

  setDailyCap(capUsd: number | null): Promise<void> {
    return setDailyCap(this.client, capUsd);
  }

  dailyCap(): Promise<number | null> {
    return dailyCap(this.client);
  }

  reserveDaily(sessionId: string, model: string, reservationUsd: number): Promise<DailyReservation> {
    return reserveDaily(this.client, sessionId, model, reservationUsd);
  }

  settleDaily(id: string, costUsd: number): Promise<void> {
    return settleDaily(this.client, id, costUsd);
  }

  dailyBudgetView(): Promise<DailyBudgetView> {
    return dailyBudgetView(this.client);
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

  async findSessionsByShortId(shortId: string, limit: number): Promise<SessionRow[]> {
    // The short id is the end of the id's timestamp, just before its final Z; matched literally.
    const pattern = `%-%${shortId.replace(/[\\%_]/g, (c) => `\\${c}`)}Z`;
    const { rows } = await this.client.query<SessionRecord>(
      `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id LIKE $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [pattern, limit],
    );
    return rows.map(toSession).filter((row) => shortIdOf(row.id) === shortId);
  }

  async findSessionsByName(name: string, limit: number): Promise<SessionRow[]> {
    const { rows } = await this.client.query<SessionRecord>(
      `SELECT ${SESSION_COLUMNS} FROM sessions WHERE name = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [name, limit],
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
