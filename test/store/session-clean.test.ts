/** Issue 17 (retention) on real PostgreSQL: cleaning a session removes its rows from every table, in one transaction, and only when it is stopped. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userText } from '../../core/messages';
import { CLEANABLE_STATUSES } from '../../core/retention';
import { migrate } from '../../store/migrations';
import { CLEANED_TABLES } from '../../store/session-clean';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { createTestDatabase, type TestDatabase } from './test-databases';

describe('cleaning a session', () => {
  let database: TestDatabase;
  let client: SqlClient;
  let store: SqlSessionStore;
  beforeAll(async () => {
    database = await createTestDatabase();
    client = createPgClient(database.url);
    await migrate(client);
    store = new SqlSessionStore(client);
  });
  afterAll(async () => {
    await client.close();
    await database.drop();
  });

  async function filled(id: string, status: string): Promise<void> {
    await store.createSession({
      id,
      projectDir: '/p',
      projectHash: 'eeeeeeeeeeee',
      objective: 'o',
      model: 'm',
      workflowId: `goal-${id}`,
    });
    await store.appendMessage(id, 'initial', userText('hello'), {
      event: { kind: 'opened', data: {}, key: 'opened' },
    });
    await store.writeSpool(id, 'call-1', 'bash', 'output');
    await store.saveCheckpoint(id, { goal: 1 }, []);
    await store.saveWorkspaceContext(id, 1, { x: 1 });
    await store.tryLockSession(id, 'clean', 'me', 60_000);
    await store.watchStream(id, Date.now() + 60_000);
    await store.appendStreamDelta(id, { execution: 1, step: 1, attempt: 1, seq: 0, offset: 0, text: 'he' });
    await store.storeImage(id, { mediaType: 'image/png', data: new Uint8Array([1, 2, 3]) });
    await store.renameSession(id, `name of ${id}`);
    await store.updateSession(id, { status: status as never, goalState: { goal: { objective: 'o' } } });
  }

  async function rowsOf(id: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of CLEANED_TABLES) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table} WHERE session_id = $1`,
        [id],
      );
      counts[table] = rows[0].n;
    }
    return counts;
  }

  it('removes every row of the session per table and marks it cleaned, leaving others alone', async () => {
    await filled('s-done', 'completed');
    await filled('s-other', 'completed');
    expect(Object.values(await rowsOf('s-done')).every((n) => n > 0)).toBe(true);
    expect(await store.cleanSession('s-done', CLEANABLE_STATUSES)).toBe(true);
    expect(await rowsOf('s-done')).toEqual(Object.fromEntries(CLEANED_TABLES.map((t) => [t, 0])));
    const row = await store.getSession('s-done');
    expect(row?.cleanedAt).toBeInstanceOf(Date);
    expect(row?.goalState).toBeNull();
    expect(row?.name).toBeNull();
    expect(Object.values(await rowsOf('s-other')).every((n) => n > 0)).toBe(true);
    // A second clean changes nothing.
    expect(await store.cleanSession('s-done', CLEANABLE_STATUSES)).toBe(false);
  });

  it('refuses a session that is not stopped', async () => {
    await filled('s-running', 'running');
    await filled('s-paused', 'paused');
    expect(await store.cleanSession('s-running', CLEANABLE_STATUSES)).toBe(false);
    expect(await store.cleanSession('s-paused', CLEANABLE_STATUSES)).toBe(false);
    expect(Object.values(await rowsOf('s-running')).every((n) => n > 0)).toBe(true);
  });
});
