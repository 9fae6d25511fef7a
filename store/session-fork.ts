/**
 * A fork's rows (issue 17 §3), in the caller's transaction: the new session row, the parent's messages
 * up to the cut copied in order (each gets a new seq), and the saved state moved to those seqs. The
 * parent's rows are only read.
 */
import type { SavedState, SeqMap } from '../core/fork-point';
import { remapStateSeqs } from '../core/fork-point';
import { toJson } from './rows';
import type { SqlExecutor } from './sql';
import type { NewSession } from './types';

/** What a fork writes. */
export interface ForkRecord {
  parentId: string;
  session: NewSession & { name: string | null; status: string; reason: string };
  /** The last parent message the fork keeps. */
  cutSeq: number;
  /** The saved state it starts from (parent seqs; moved here). */
  state: SavedState;
}

/** Writes the fork's session row and messages; returns how many messages were copied. */
export async function forkSession(tx: SqlExecutor, record: ForkRecord): Promise<number> {
  const { session } = record;
  await tx.query(
    `INSERT INTO sessions (id, project_dir, project_hash, objective, model, workflow_id, name, status, reason)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      session.id,
      session.projectDir,
      session.projectHash,
      session.objective,
      session.model,
      session.workflowId,
      session.name,
      session.status,
      session.reason,
    ],
  );
  const { rows } = await tx.query<{
    seq: string | number;
    key: string;
    role: string;
    content: unknown;
    meta: unknown;
  }>(`SELECT seq, key, role, content, meta FROM messages WHERE session_id = $1 AND seq <= $2 ORDER BY seq`, [
    record.parentId,
    record.cutSeq,
  ]);
  const map = new Map<number, number>();
  for (const row of rows) {
    const inserted = await tx.query<{ seq: string | number }>(
      `INSERT INTO messages (session_id, key, role, content, meta) VALUES ($1, $2, $3, $4::jsonb, $5::jsonb)
       RETURNING seq`,
      [session.id, row.key, row.role, toJson(row.content), toJson(row.meta)],
    );
    map.set(Number(row.seq), Number(inserted.rows[0].seq));
  }
  const state = remapStateSeqs(record.state, map as SeqMap);
  await tx.query('UPDATE sessions SET goal_state = $2::jsonb WHERE id = $1', [session.id, toJson(state)]);
  return rows.length;
}

/** Every saved checkpoint state of a session, oldest first. */
export async function checkpointStates(db: SqlExecutor, sessionId: string): Promise<SavedState[]> {
  const { rows } = await db.query<{ goal_state: SavedState | null }>(
    'SELECT goal_state FROM checkpoints WHERE session_id = $1 ORDER BY id',
    [sessionId],
  );
  return rows.map((row) => row.goal_state).filter((state): state is SavedState => state !== null);
}
