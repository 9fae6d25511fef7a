/**
 * The workspace contexts a worker process has read, kept by (session, execution). A row is written
 * once per execution and never changed (saveWorkspaceContext inserts or returns the first), so a
 * step of the same execution can take it from memory instead of the store: every model step and
 * tool call reads it.
 */

import type { SqlExecutor } from './sql';
import { latestWorkspaceContext, saveWorkspaceContext } from './workspace-contexts';

/** How many rows a process keeps; the oldest goes first (a row is a few kilobytes). */
export const WORKSPACE_CONTEXT_CACHE_MAX_ROWS = 2_000;

/** One execution's stored workspace context. */
export interface WorkspaceContextRow {
  execution: number;
  data: unknown;
}

/** A bounded map of the rows read or written, least recently used first. */
export class WorkspaceContextCache {
  private readonly rows = new Map<string, WorkspaceContextRow>();

  constructor(private readonly maxRows = WORKSPACE_CONTEXT_CACHE_MAX_ROWS) {}

  /** The row of this execution, if this process has seen it. */
  get(sessionId: string, execution: number): WorkspaceContextRow | undefined {
    const key = keyOf(sessionId, execution);
    const row = this.rows.get(key);
    if (row) {
      this.rows.delete(key);
      this.rows.set(key, row);
    }
    return row;
  }

  /** Keeps a row read from or written to the store. */
  remember(sessionId: string, row: WorkspaceContextRow): void {
    const key = keyOf(sessionId, row.execution);
    this.rows.delete(key);
    this.rows.set(key, row);
    while (this.rows.size > this.maxRows) {
      const oldest = this.rows.keys().next().value;
      if (oldest === undefined) break;
      this.rows.delete(oldest);
    }
  }

  /** Forgets a session's rows (it was deleted or cleaned). */
  forget(sessionId: string): void {
    const prefix = `${sessionId}\u0000`;
    for (const key of this.rows.keys()) if (key.startsWith(prefix)) this.rows.delete(key);
  }
}

function keyOf(sessionId: string, execution: number): string {
  return `${sessionId}\u0000${execution}`;
}

/** One store's workspace contexts, read through a {@link WorkspaceContextCache}. */
export class CachedWorkspaceContexts {
  constructor(
    private readonly db: SqlExecutor,
    private readonly cache = new WorkspaceContextCache(),
  ) {}

  /** Saves an execution's row once (a retry gets the first row's data back), and keeps it. */
  async save(
    sessionId: string,
    execution: number,
    data: unknown,
  ): Promise<{ data: unknown; created: boolean }> {
    const saved = await saveWorkspaceContext(this.db, sessionId, execution, data);
    this.cache.remember(sessionId, { execution, data: saved.data });
    return saved;
  }

  /** The newest row; from memory when it is the asking execution's own and this process has seen it. */
  async latest(sessionId: string, execution?: number): Promise<WorkspaceContextRow | null> {
    const kept = execution === undefined ? undefined : this.cache.get(sessionId, execution);
    if (kept) return kept;
    const row = await latestWorkspaceContext(this.db, sessionId);
    // Only the asking execution's own row is kept: an older one is the newest only until it writes its own.
    if (row && row.execution === execution) this.cache.remember(sessionId, row);
    return row;
  }

  /** Forgets a session's rows (it was deleted or cleaned). */
  forget(sessionId: string): void {
    this.cache.forget(sessionId);
  }
}
