import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Pool, type PoolClient } from 'pg';

/** What both a client and an open transaction can run. */
export interface SqlExecutor {
  /** Runs one statement with `$1`-style parameters. */
  query<T>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

/** A connection to PostgreSQL or to an embedded PGlite, with the same SQL on both. */
export interface SqlClient extends SqlExecutor {
  /** Runs `fn` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Name of the lock file that keeps a second process out of a PGlite data directory. */
export const PGLITE_LOCK_FILE = 'goalrun.lock';

/** Attempts at taking the lock; each lost race with another process starting at once costs one. */
const LOCK_ATTEMPTS = 5;

/** A client over a `pg.Pool`; several processes can share the database. */
export function createPgClient(databaseUrl: string): SqlClient {
  const pool = new Pool({ connectionString: databaseUrl });
  // An idle pooled connection that dies (server restart, network) emits 'error' on the pool; without a
  // listener Node would crash the process. The pool drops the connection and the next query reconnects.
  pool.on('error', () => {});
  return {
    async query<T>(text: string, params?: unknown[]) {
      const result = await pool.query(text, params);
      return { rows: result.rows as T[] };
    },
    async exec(script: string) {
      // Without parameters pg uses the simple protocol, which accepts several statements.
      await pool.query(script);
    },
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>) {
      const connection = await pool.connect();
      try {
        await connection.query('BEGIN');
        const result = await fn(pgExecutor(connection));
        await connection.query('COMMIT');
        connection.release();
        return result;
      } catch (error) {
        await rollbackAndRelease(connection);
        throw error;
      }
    },
    async close() {
      await pool.end();
    },
  };
}

function pgExecutor(connection: PoolClient): SqlExecutor {
  return {
    async query<T>(text: string, params?: unknown[]) {
      const result = await connection.query(text, params);
      return { rows: result.rows as T[] };
    },
    async exec(script: string) {
      await connection.query(script);
    },
  };
}

async function rollbackAndRelease(connection: PoolClient): Promise<void> {
  try {
    await connection.query('ROLLBACK');
    connection.release();
  } catch (rollbackError) {
    // A connection that cannot roll back is broken: destroy it rather than return it to the pool.
    connection.release(rollbackError instanceof Error ? rollbackError : true);
  }
}

/**
 * A client over an embedded PGlite stored in `dataDir`. PGlite is single-process: a lock file in the
 * directory keeps a second process out, and a lock left by a dead process is taken over.
 */
export async function createPgliteClient(dataDir: string): Promise<SqlClient> {
  const dir = path.resolve(dataDir);
  fs.mkdirSync(dir, { recursive: true });
  const lock = acquireLock(dir);
  let db: PGlite;
  try {
    db = await PGlite.create(dir);
  } catch (error) {
    lock.release();
    throw error;
  }
  let closed = false;
  return {
    async query<T>(text: string, params?: unknown[]) {
      const result = await db.query<T>(text, params);
      return { rows: result.rows };
    },
    async exec(script: string) {
      await db.exec(script);
    },
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>) {
      // PGlite's transaction() holds a mutex, so queries of other callers wait instead of joining it.
      return db.transaction((tx) =>
        fn({
          async query<R>(text: string, params?: unknown[]) {
            const result = await tx.query<R>(text, params);
            return { rows: result.rows };
          },
          async exec(script: string) {
            await tx.exec(script);
          },
        }),
      );
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await db.close();
      } finally {
        lock.release();
      }
    },
  };
}

interface HeldLock {
  release(): void;
}

/** Takes the lock file of `dir`, writing our pid; throws when a live process holds it. */
function acquireLock(dir: string): HeldLock {
  const lockPath = path.join(dir, PGLITE_LOCK_FILE);
  for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
    if (tryCreateLock(lockPath)) {
      return { release: () => releaseLock(lockPath) };
    }
    const holder = readLockPid(lockPath);
    if (holder === undefined) continue; // The holder released it between our two steps: try again.
    if (holder !== null && isAlive(holder)) throw lockInUseError(dir, holder);
    takeOverStaleLock(lockPath, dir);
  }
  throw new Error(`Could not take the lock ${lockPath}: other processes kept racing for it.`);
}

/** Creates the lock file with our pid in one atomic step; false when it already exists. */
function tryCreateLock(lockPath: string): boolean {
  // Writing a private file and hard-linking it into place means nobody ever sees a lock without a pid.
  const tmpPath = `${lockPath}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmpPath, `${process.pid}\n`);
  try {
    fs.linkSync(tmpPath, lockPath);
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  } finally {
    fs.rmSync(tmpPath, { force: true });
  }
}

/** The pid in the lock file: undefined when the file is gone, null when it holds no valid pid. */
function readLockPid(lockPath: string): number | null | undefined {
  let text: string;
  try {
    text = fs.readFileSync(lockPath, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/**
 * Removes a lock whose holder is dead. The lock is renamed away first (atomic, so of two processes
 * racing for the same stale lock only one moves it), then checked again: if a live process had taken
 * it over in the meantime, it is put back and we report that process.
 */
function takeOverStaleLock(lockPath: string, dir: string): void {
  const movedPath = `${lockPath}.stale.${process.pid}.${Date.now()}`;
  try {
    fs.renameSync(lockPath, movedPath);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return; // Someone else moved it: retry from the start.
    throw error;
  }
  const holder = readLockPid(movedPath);
  if (holder !== null && holder !== undefined && isAlive(holder)) {
    try {
      fs.linkSync(movedPath, lockPath);
    } finally {
      fs.rmSync(movedPath, { force: true });
    }
    throw lockInUseError(dir, holder);
  }
  fs.rmSync(movedPath, { force: true });
}

function releaseLock(lockPath: string): void {
  // Only remove the lock if it is still ours.
  if (readLockPid(lockPath) === process.pid) fs.rmSync(lockPath, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return errorCode(error) === 'EPERM';
  }
}

function lockInUseError(dir: string, pid: number): Error {
  return new Error(
    `The embedded store at ${dir} is in use by process ${pid}. ` +
      'The embedded store (PGlite) allows one process at a time; set DATABASE_URL to a PostgreSQL ' +
      'database to let several processes share a store.',
  );
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
