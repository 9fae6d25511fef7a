/**
 * The store's statements run named on real PostgreSQL: prepared once per connection and reused, and
 * when the server no longer holds what the client prepared (what a transaction-pooling PgBouncer
 * before 1.21 does), the statement runs again unnamed and the process stops naming statements.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statementConfig } from '../../store/named-statements';
import { createPgClient, type SqlClient } from '../../store/sql';
import { createTestDatabase, type TestDatabase } from './test-databases';

const STATEMENT = 'SELECT $1::int + 1 AS next';

describe('named statements', () => {
  let database: TestDatabase;
  let client: SqlClient;
  beforeAll(async () => {
    database = await createTestDatabase();
    client = createPgClient(database.url);
  });
  afterAll(async () => {
    await client?.close();
    await database?.drop();
  });

  it('names a statement with parameters by its text, and leaves one without them unnamed', () => {
    const first = statementConfig(STATEMENT, [1]);
    expect(first.name).toMatch(/^goalrun_[0-9a-f]{20}$/);
    expect(statementConfig(STATEMENT, [2]).name).toBe(first.name);
    expect(statementConfig('SELECT $1::int AS other', [1]).name).not.toBe(first.name);
    expect(statementConfig('SELECT 1', undefined).name).toBeUndefined();
  });

  it('prepares a statement once on a connection and runs it from there', async () => {
    const { name } = statementConfig(STATEMENT, [0]);
    const prepared = await client.transaction(async (tx) => {
      expect((await tx.query<{ next: number }>(STATEMENT, [1])).rows).toEqual([{ next: 2 }]);
      expect((await tx.query<{ next: number }>(STATEMENT, [41])).rows).toEqual([{ next: 42 }]);
      return (
        await tx.query<{ name: string; calls: string }>(
          'SELECT name, generic_plans + custom_plans AS calls FROM pg_prepared_statements WHERE name = $1',
          [name],
        )
      ).rows;
    });
    // One statement on the server for both runs.
    expect(prepared).toEqual([{ name, calls: '2' }]);
  });

  it('runs a statement again unnamed when the server lost it, and names nothing after', async () => {
    // One connection in the pool (the queries come one at a time): it has the statement prepared.
    expect((await client.query<{ next: number }>(STATEMENT, [1])).rows).toEqual([{ next: 2 }]);
    // The server forgets it; the client does not know, as behind a pooler that switched connections.
    await client.exec('DEALLOCATE ALL');
    expect((await client.query<{ next: number }>(STATEMENT, [9])).rows).toEqual([{ next: 10 }]);
    expect(statementConfig(STATEMENT, [1]).name).toBeUndefined();
    const left = await client.query<{ count: string }>('SELECT count(*) FROM pg_prepared_statements', []);
    expect(left.rows).toEqual([{ count: '0' }]);
  });
});
