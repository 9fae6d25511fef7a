/** The sessions table: creating, reading, updating and deleting session rows, and finding them by id, name or project. */
import { matchesShortId, SHORT_ID_LENGTH, sessionIdEndOf, stampDigitsOf } from '../core/session-ids';
import { SESSION_COLUMNS, type SessionRecord, toJson, toSession } from './rows';
import type { SqlExecutor } from './sql';
import type { GoalStatus, NewSession, SessionRow } from './types';

/** The fields of a session row that `updateSession` may change; an absent field is left as it is. */
export interface SessionPatch {
  status?: GoalStatus;
  reason?: string | null;
  goalState?: unknown;
  model?: string;
}

/** Inserts the session row; a second call with the same id changes nothing. */
export async function createSession(db: SqlExecutor, session: NewSession): Promise<void> {
  await db.query(
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

/** The session with this id, or null. */
export async function getSession(db: SqlExecutor, id: string): Promise<SessionRow | null> {
  const { rows } = await db.query<SessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`, [
    id,
  ]);
  return rows.length > 0 ? toSession(rows[0]) : null;
}

/** The session with this session id or, failing that, the newest with this workflow id. */
export async function findSession(db: SqlExecutor, idOrWorkflowId: string): Promise<SessionRow | null> {
  // A session id wins over a workflow id that happens to be spelled the same.
  const { rows } = await db.query<SessionRecord>(
    `SELECT ${SESSION_COLUMNS} FROM sessions
     WHERE id = $1 OR workflow_id = $1
     ORDER BY (id = $1) DESC, created_at DESC
     LIMIT 1`,
    [idOrWorkflowId],
  );
  return rows.length > 0 ? toSession(rows[0]) : null;
}

/** The newest `limit` sessions of every project. */
export async function listSessions(db: SqlExecutor, limit: number): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRecord>(
    `SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY created_at DESC, id DESC LIMIT $1`,
    [limit],
  );
  return rows.map(toSession);
}

/** Sets the patch's fields on the session row and stamps updated_at. */
export async function updateSession(db: SqlExecutor, id: string, patch: SessionPatch): Promise<void> {
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
  await db.query(`UPDATE sessions SET ${sets.join(', ')} WHERE id = $1`, params);
}

/** Deletes the session and every row of it. */
export async function deleteSession(db: SqlExecutor, id: string): Promise<void> {
  // Every child table references sessions with ON DELETE CASCADE, but those written before its
  // session row exists.
  await db.query('DELETE FROM sessions WHERE id = $1', [id]);
  for (const table of ['workspace_contexts', 'stream_deltas', 'stream_watchers', 'images']) {
    await db.query(`DELETE FROM ${table} WHERE session_id = $1`, [id]);
  }
}

/** Sessions whose id starts with `prefix`, newest first. */
export async function findSessionsByPrefix(
  db: SqlExecutor,
  prefix: string,
  limit: number,
): Promise<SessionRow[]> {
  // LIKE treats % and _ as wildcards; a prefix is matched literally.
  const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const { rows } = await db.query<SessionRecord>(
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id LIKE $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
    [pattern, limit],
  );
  return rows.map(toSession);
}

/** Sessions a short id (core/session-ids.ts, of any length) names, newest first. */
export async function findSessionsByShortId(
  db: SqlExecutor,
  shortId: string,
  limit: number,
): Promise<SessionRow[]> {
  const end = sessionIdEndOf(shortId);
  if (end === null) return [];
  // Digits, a T and a Z: nothing LIKE reads as a wildcard.
  const { rows } = await db.query<SessionRecord>(
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id LIKE $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
    [`%-%${end}`, limit],
  );
  return rows.map(toSession).filter((row) => matchesShortId(row.id, shortId));
}

/**
 * The ids of the store that end like any of `ids` (their shortest short id): all a short id must be
 * told apart from (core/session-ids.ts shortIdAmong). `ids` themselves are among them when stored.
 */
export async function sessionIdsSharingEnds(db: SqlExecutor, ids: string[]): Promise<string[]> {
  const patterns = [
    ...new Set(
      ids
        .map(stampDigitsOf)
        .filter((digits): digits is string => digits !== null)
        .map((digits) => `%-%${sessionIdEndOf(digits.slice(-SHORT_ID_LENGTH))}`),
    ),
  ];
  if (patterns.length === 0) return [];
  const { rows } = await db.query<{ id: string }>('SELECT id FROM sessions WHERE id LIKE ANY($1::text[])', [
    patterns,
  ]);
  return rows.map((row) => row.id);
}

/** Sessions of any project with this name, newest first. */
export async function findSessionsByName(
  db: SqlExecutor,
  name: string,
  limit: number,
): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRecord>(
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE name = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
    [name, limit],
  );
  return rows.map(toSession);
}

/** The newest session of the project with this hash, or null. */
export async function latestSessionOfProject(
  db: SqlExecutor,
  projectHash: string,
): Promise<SessionRow | null> {
  const { rows } = await db.query<SessionRecord>(
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE project_hash = $1 ORDER BY created_at DESC, id DESC LIMIT 1`,
    [projectHash],
  );
  return rows.length > 0 ? toSession(rows[0]) : null;
}
