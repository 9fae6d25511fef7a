/**
 * Session names (issue 17, F-SESSION): unique per project, claimed by a unique index rather than a
 * check-then-insert, so two `start --name` racing for one new name create one session.
 */
import { SESSION_COLUMNS, type SessionRecord, toSession } from './rows';
import type { SqlClient, SqlExecutor } from './sql';
import type { NewSession, SessionRow } from './types';

/** The unique index that keeps names unique per project (migration 6). */
export const NAME_INDEX = 'sessions_project_name_unique';

/** A name already given to another session of the same project. */
export class SessionNameTaken extends Error {
  readonly type = 'SessionNameTaken';
  constructor(
    readonly sessionName: string,
    readonly takenBy: string,
  ) {
    super(
      `the name "${sessionName}" is taken by session ${takenBy} of this project; pick another or rename that one`,
    );
    this.name = 'SessionNameTaken';
  }
}

/** What claiming a name found: a session made now (locked for the caller), or the one that has it. */
export type NameClaim = { created: true; session: SessionRow } | { created: false; session: SessionRow };

/**
 * Creates a named session and takes its operation lock in one transaction, unless the project already
 * has a session of that name, which is returned instead. A racing claim waits on the unique index until
 * the first commits, then finds the first's row.
 */
export async function claimSessionName(
  client: SqlClient,
  session: NewSession & { name: string },
  lock: { operation: string; holder: string; ttlMs: number },
): Promise<NameClaim> {
  const created = await client.transaction(async (tx) => {
    const { rows } = await tx.query<SessionRecord>(
      `INSERT INTO sessions (id, project_dir, project_hash, objective, model, workflow_id, name)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT DO NOTHING
       RETURNING ${SESSION_COLUMNS}`,
      [
        session.id,
        session.projectDir,
        session.projectHash,
        session.objective,
        session.model,
        session.workflowId,
        session.name,
      ],
    );
    if (rows.length === 0) return null;
    await tx.query(
      `INSERT INTO session_locks (session_id, operation, holder, expires_at)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4::double precision / 1000))`,
      [session.id, lock.operation, lock.holder, lock.ttlMs],
    );
    return toSession(rows[0]);
  });
  if (created) return { created: true, session: created };
  const existing = await findSessionByName(client, [session.projectHash], session.name);
  if (!existing) throw new Error(`session name "${session.name}" was neither claimed nor found`);
  return { created: false, session: existing };
}

/** The session of one of these project hashes with this name, or null. */
export async function findSessionByName(
  db: SqlExecutor,
  projectHashes: string[],
  name: string,
): Promise<SessionRow | null> {
  const { rows } = await db.query<SessionRecord>(
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE project_hash = ANY($1::text[]) AND name = $2
     ORDER BY created_at DESC LIMIT 1`,
    [projectHashes, name],
  );
  return rows.length > 0 ? toSession(rows[0]) : null;
}

/** Sets a session's name; throws SessionNameTaken when another session of its project has it. */
export async function renameSession(db: SqlExecutor, id: string, name: string): Promise<void> {
  try {
    await db.query('UPDATE sessions SET name = $2, updated_at = now() WHERE id = $1', [id, name]);
  } catch (error) {
    if ((error as { constraint?: string }).constraint !== NAME_INDEX) throw error;
    const { rows } = await db.query<{ id: string }>(
      `SELECT o.id FROM sessions o JOIN sessions s ON s.project_hash = o.project_hash
       WHERE s.id = $1 AND o.name = $2`,
      [id, name],
    );
    throw new SessionNameTaken(name, rows[0]?.id ?? 'another session');
  }
}

/** Sessions of these projects (every project when null), newest first. */
export async function listProjectSessions(
  db: SqlExecutor,
  projectHashes: string[] | null,
  limit: number,
): Promise<SessionRow[]> {
  const { rows } = await db.query<SessionRecord>(
    `SELECT ${SESSION_COLUMNS} FROM sessions
     WHERE $1::text[] IS NULL OR project_hash = ANY($1::text[])
     ORDER BY updated_at DESC, id DESC LIMIT $2`,
    [projectHashes, limit],
  );
  return rows.map(toSession);
}
