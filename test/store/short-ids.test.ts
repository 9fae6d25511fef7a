/**
 * Short ids (issue 26 §10) on real PostgreSQL: the store finds the sessions a short id names at any
 * length it may have, and the ids a short id must be told apart from, so that two goals whose last
 * 8 digits match get 9-digit short ids that each find one goal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionIdWith, shortIdAmong } from '../../core/session-ids';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import type { NewSession } from '../../store/types';
import { createTestDatabase, type TestDatabase } from './test-databases';

function session(id: string): NewSession {
  const projectHash = id.slice(0, id.indexOf('-'));
  return {
    id,
    projectDir: `/p/${projectHash}`,
    projectHash,
    objective: 'o',
    model: 'scripted:any',
    workflowId: `goal-${id}`,
  };
}

describe('short ids in the store', () => {
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

  it('finds what a short id names and what it must be told apart from', async () => {
    // Same minute, second and millisecond, hours ten apart: the last 8 digits are shared.
    const early = sessionIdWith('aaaaaaaaaaaa', new Date('2026-11-30T05:21:51.123Z'));
    const late = sessionIdWith('aaaaaaaaaaaa', new Date('2026-11-30T15:21:51.123Z'));
    const other = sessionIdWith('bbbbbbbbbbbb', new Date('2026-11-30T15:22:00.000Z'));
    for (const id of [early, late, other]) await store.createSession(session(id));

    expect((await store.sessionIdsSharingEnds([late])).sort()).toEqual([early, late].sort());
    expect(await store.sessionIdsSharingEnds([other])).toEqual([other]);
    const everyId = await store.sessionIdsSharingEnds([early, late]);
    expect(shortIdAmong(early, everyId)).toBe('052151123');
    expect(shortIdAmong(late, everyId)).toBe('152151123');

    const shared = await store.findSessionsByShortId('52151123', 10);
    expect(shared.map((row) => row.id).sort()).toEqual([early, late].sort());
    expect((await store.findSessionsByShortId('152151123', 10)).map((row) => row.id)).toEqual([late]);
    expect((await store.findSessionsByShortId('0152151123', 10)).map((row) => row.id)).toEqual([late]);
    expect(await store.findSessionsByShortId('1152151123', 10)).toEqual([]);
    expect((await store.findSessionsByShortId('30152151123', 10)).map((row) => row.id)).toEqual([late]);
    expect(await store.findSessionsByShortId('5215112', 10)).toEqual([]);
  });
});
