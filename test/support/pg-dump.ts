/**
 * The whole test database as `pg_dump` writes it (schema and every row), for tests that scan the
 * store for values that must never be there. pg_dump comes with PostgreSQL's client tools (the
 * `postgresql` package that .ci/run installs); a machine without it fails the test, never skips it.
 */
import { execFileSync } from 'node:child_process';

/** A dump of every table larger than this is not a test database. */
const MAX_DUMP_BYTES = 256 * 1024 * 1024;

/** The plain-text dump of a database, by its URL. */
export function pgDump(databaseUrl: string): string {
  try {
    return execFileSync('pg_dump', ['--no-owner', '--no-privileges', '--dbname', databaseUrl], {
      encoding: 'utf8',
      maxBuffer: MAX_DUMP_BYTES,
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error('pg_dump is not installed: apt-get install postgresql-client');
    throw error;
  }
}
