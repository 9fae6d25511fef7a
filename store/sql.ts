import type { PoolClient } from 'pg';
import { storableText } from '../core/text';
import { namedStatementFailed, statementConfig } from './named-statements';
import { Pool } from './pg';

/** What both a client and an open transaction can run. */
export interface SqlExecutor {
  /** Runs one statement with `$1`-style parameters. */
  query<T>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

/** A connection to PostgreSQL (a server of the user's, or goalrun's embedded one). */
export interface SqlClient extends SqlExecutor {
  /** Runs `fn` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Connections one process keeps open at most. A worker runs up to 20 activities at once
 * (worker/worker.ts MAX_CONCURRENT_ACTIVITIES) plus the workflows' local store activities, each
 * holding a connection for a transaction: pg's default of 10 made them queue under load
 * (scripts/bench-concurrency.js). Two workers and a few CLI commands stay far below PostgreSQL's
 * default max_connections of 100.
 */
export const PG_POOL_SIZE = 20;

/**
 * A parameter as PostgreSQL takes it: strings (also inside arrays) without lone surrogates or NUL,
 * which text and jsonb columns refuse (core/text storableText). Model and tool text reaches the
 * store from everywhere, so this is the one place that makes every write of it safe.
 */
function storableParam(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableParam);
  return value;
}

function storableParams(params: unknown[] | undefined): unknown[] | undefined {
  return params?.map(storableParam);
}

/** A client over a `pg.Pool`; several processes can share the database. */
export function createPgClient(databaseUrl: string): SqlClient {
  const pool = new Pool({ connectionString: databaseUrl, max: PG_POOL_SIZE });
  // An idle pooled connection that dies (server restart, network) emits 'error' on the pool; without a
  // listener Node would crash the process. The pool drops the connection and the next query reconnects.
  pool.on('error', () => {});
  return {
    async query<T>(text: string, params?: unknown[]) {
      const values = storableParams(params);
      try {
        const result = await pool.query(statementConfig(text, values));
        return { rows: result.rows as T[] };
      } catch (error) {
        // Outside a transaction nothing was done: run it once more, unnamed.
        if (!namedStatementFailed(error)) throw error;
        const result = await pool.query({ text, values });
        return { rows: result.rows as T[] };
      }
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
      // In a transaction a failed statement aborts it: a named statement that failed turns names
      // off (namedStatementFailed) and the error goes up, so the caller's retry runs unnamed.
      const result = await connection
        .query(statementConfig(text, storableParams(params)))
        .catch((error: unknown) => {
          namedStatementFailed(error);
          throw error;
        });
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
