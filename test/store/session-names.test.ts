/**
 * Issue 17 (F-SESSION) on real PostgreSQL: names are claimed under a unique index (two racing claims
 * make one session), are unique per project on rename too, and a session's operation lock admits one
 * holder at a time, lapsing when its lease runs out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../store/migrations';
import { SessionNameTaken } from '../../store/session-names';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import type { NewSession } from '../../store/types';
import { createTestDatabase, type TestDatabase } from './test-databases';

const PROJECT = 'aaaaaaaaaaaa';
const OTHER_PROJECT = 'bbbbbbbbbbbb';

function session(id: string, projectHash = PROJECT): NewSession {
  return {
    id,
    projectDir: `/p/${projectHash}`,
    projectHash,
    objective: 'o',
    model: 'scripted:any',
    workflowId: `goal-${id}`,
  };
}

describe('session names and locks', () => {
  let database: TestDatabase;
  let clients: SqlClient[];
  let store: SqlSessionStore;
  beforeAll(async () => {
    database = await createTestDatabase();
    clients = [createPgClient(database.url), createPgClient(database.url)];
    await migrate(clients[0]);
    store = new SqlSessionStore(clients[0]);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await database.drop();
  });

  it('of many claims racing for one new name, one creates the session and the others find it', async () => {
    const stores = clients.map((client) => new SqlSessionStore(client));
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        stores[i % 2].claimSessionName(
          { ...session(`${PROJECT}-race${i}`), name: 'racer' },
          { operation: 'start', holder: `h${i}`, ttlMs: 60_000 },
        ),
      ),
    );
    const created = claims.filter((claim) => claim.created);
    expect(created).toHaveLength(1);
    const winner = created[0].session.id;
    for (const claim of claims) expect(claim.session.id).toBe(winner);
    const rows = (await store.listProjectSessions([PROJECT], 100)).filter((row) => row.name === 'racer');
    expect(rows.map((row) => row.id)).toEqual([winner]);
    // The winner holds the session's lock from the moment its row exists.
    const other = await store.tryLockSession(winner, 'resume', 'someone-else', 60_000);
    expect(other.acquired).toBe(false);
    if (!other.acquired) expect(other.heldBy.operation).toBe('start');
  });

  it('finds a name only in its own project, and the same name may live in another project', async () => {
    await store.claimSessionName(
      { ...session(`${OTHER_PROJECT}-1`, OTHER_PROJECT), name: 'racer' },
      {
        operation: 'start',
        holder: 'x',
        ttlMs: 1000,
      },
    );
    const mine = await store.findSessionByName([PROJECT], 'racer');
    const theirs = await store.findSessionByName([OTHER_PROJECT], 'racer');
    expect(mine?.projectHash).toBe(PROJECT);
    expect(theirs?.id).toBe(`${OTHER_PROJECT}-1`);
    expect(await store.findSessionByName([PROJECT], 'nobody')).toBeNull();
  });

  it('refuses a rename to a name the project already has, and allows it in another project', async () => {
    await store.createSession(session(`${PROJECT}-plain`));
    await expect(store.renameSession(`${PROJECT}-plain`, 'racer')).rejects.toBeInstanceOf(SessionNameTaken);
    await store.renameSession(`${PROJECT}-plain`, 'fresh name');
    expect((await store.getSession(`${PROJECT}-plain`))?.name).toBe('fresh name');
    // Renaming a session to its own name is no conflict.
    await store.renameSession(`${PROJECT}-plain`, 'fresh name');
    await store.createSession(session(`${OTHER_PROJECT}-plain`, OTHER_PROJECT));
    await store.renameSession(`${OTHER_PROJECT}-plain`, 'fresh name');
  });

  it('admits one holder of a session lock at a time; a lapsed lease can be taken over', async () => {
    const id = `${PROJECT}-locked`;
    await store.createSession(session(id));
    expect((await store.tryLockSession(id, 'resume', 'a', 60_000)).acquired).toBe(true);
    const second = await store.tryLockSession(id, 'clean', 'b', 60_000);
    expect(second.acquired).toBe(false);
    if (!second.acquired) expect(second.heldBy).toMatchObject({ operation: 'resume', holder: 'a' });
    // b cannot release a's lock.
    await store.unlockSession(id, 'b');
    expect((await store.tryLockSession(id, 'clean', 'b', 60_000)).acquired).toBe(false);
    await store.unlockSession(id, 'a');
    expect((await store.tryLockSession(id, 'clean', 'b', 1)).acquired).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await store.tryLockSession(id, 'resume', 'c', 60_000)).acquired).toBe(true);
  });

  it('migration 6 keeps the newest of two sessions that shared a name before it', async () => {
    const fresh = await createTestDatabase();
    const client = createPgClient(fresh.url);
    try {
      await migrate(
        client,
        (await import('../../store/migrations')).MIGRATIONS.filter((m) => m.id < 6),
      );
      const old = new SqlSessionStore(client);
      await old.createSession(session(`${PROJECT}-older`));
      await old.createSession(session(`${PROJECT}-newer`));
      await client.query(
        "UPDATE sessions SET name = 'twin', created_at = now() - interval '1 hour' WHERE id = $1",
        [`${PROJECT}-older`],
      );
      await client.query("UPDATE sessions SET name = 'twin' WHERE id = $1", [`${PROJECT}-newer`]);
      expect(await migrate(client)).toContain(6);
      expect((await old.getSession(`${PROJECT}-newer`))?.name).toBe('twin');
      expect((await old.getSession(`${PROJECT}-older`))?.name).toBe(`twin (${PROJECT}-older)`);
    } finally {
      await client.close();
      await fresh.drop();
    }
  });
});
