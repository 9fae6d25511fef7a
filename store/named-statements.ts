/**
 * The store's parameterized statements as named (prepared) ones, parsed once per connection. An
 * unnamed statement is parsed and planned on every run: for the statements of a model step that was
 * about a fifth of the PostgreSQL backend's CPU (docs/performance.md). Where names do not work, a
 * transaction-pooling PgBouncer before 1.21 or a statement whose cached plan a schema change broke,
 * the process goes back to unnamed statements.
 */
import { createHash } from 'node:crypto';

/** Distinct statements a process names at most: the store has a few dozen; the rest go unnamed. */
const MAX_NAMED_STATEMENTS = 128;
const NAME_PREFIX = 'goalrun_';
const NAME_HASH_CHARS = 20;
// invalid_sql_statement_name: the connection does not hold the statement the client thinks it prepared.
const STATEMENT_MISSING = '26000';
// duplicate_prepared_statement: a pooler put this connection on a server connection that another
// client had prepared the same name on.
const STATEMENT_EXISTS = '42P05';
// feature_not_supported, raised as "cached plan must not change result type" after a schema change.
const CACHED_PLAN_BROKEN = '0A000';

/** A statement as `pg` takes it: with a name, pg prepares it on each connection once. */
export interface StatementConfig {
  name?: string;
  text: string;
  values?: unknown[];
}

let namesWork = true;
const names = new Map<string, string>();

/** The statement to send: named when it has parameters and names still work in this process. */
export function statementConfig(text: string, values: unknown[] | undefined): StatementConfig {
  if (!namesWork || values === undefined) return { text, values };
  let name = names.get(text);
  if (name === undefined) {
    if (names.size >= MAX_NAMED_STATEMENTS) return { text, values };
    name = NAME_PREFIX + createHash('sha256').update(text).digest('hex').slice(0, NAME_HASH_CHARS);
    names.set(text, name);
  }
  return { name, text, values };
}

/**
 * Whether `error` says a named statement failed where an unnamed one would not; if so, this process
 * stops naming statements, and the caller may run the statement again unnamed.
 */
export function namedStatementFailed(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const failed =
    code === STATEMENT_MISSING ||
    code === STATEMENT_EXISTS ||
    (code === CACHED_PLAN_BROKEN && typeof message === 'string' && message.includes('cached plan'));
  if (failed) namesWork = false;
  return failed;
}
