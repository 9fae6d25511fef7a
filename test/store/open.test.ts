import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userText } from '../../core/messages';
import { describeStore, embeddedStoreStatus, openStore, stopEmbeddedStore } from '../../store/open';
import { createTempDir, createTestDatabase, type TestDatabase } from './test-databases';

/** The first open of an embedded store creates a PostgreSQL cluster (initdb): seconds. */
const OPEN_TIMEOUT_MS = 60_000;

const session = {
  id: 'abcdef012345-20261130T152151123Z',
  projectDir: '/work/project',
  projectHash: 'abcdef012345',
  objective: 'open test',
  model: 'anthropic:claude-test',
  workflowId: 'goal-open-test',
};

describe('openStore', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  }, OPEN_TIMEOUT_MS);

  afterAll(async () => {
    await database?.drop();
  }, OPEN_TIMEOUT_MS);

  it('opens a migrated PostgreSQL store from a database URL, and reopens it', async () => {
    const store = await openStore({ databaseUrl: database.url, home: '/nonexistent' });
    await store.createSession(session);
    await store.appendMessage(session.id, 'm1', userText('hello'));
    await store.close();

    const again = await openStore({ databaseUrl: database.url, home: '/nonexistent' });
    try {
      expect((await again.findSession(session.workflowId))?.id).toBe(session.id);
      expect(await again.countMessages(session.id)).toBe(1);
    } finally {
      await again.close();
    }
  });

  it('fails on an unreachable database and leaves nothing running', async () => {
    await expect(
      openStore({ databaseUrl: 'postgres://root@127.0.0.1:1/none?connect_timeout=2', home: '/nonexistent' }),
    ).rejects.toThrow();
  });

  it(
    'opens an embedded store under <home>/store-pg, twice at once, and keeps data across a server restart',
    async () => {
      const temp = createTempDir('goalrun-open-test');
      const said: string[] = [];
      try {
        const store = await openStore({ home: temp.dir, log: (line) => said.push(line) });
        expect(said).toEqual([
          expect.stringMatching(/^created and started the embedded PostgreSQL store \(pid \d+/),
        ]);
        // A second store of the same home, open at the same time: the server is shared, nothing is locked.
        const second = await openStore({ home: temp.dir, log: (line) => said.push(line) });
        expect(said).toHaveLength(1);
        await store.createSession(session);
        expect((await second.getSession(session.id))?.objective).toBe('open test');
        await Promise.all([store.close(), second.close()]);

        expect(await stopEmbeddedStore(temp.dir)).toBe(true);
        expect(embeddedStoreStatus(temp.dir).running).toBe(false);
        const again = await openStore({ home: temp.dir, log: (line) => said.push(line) });
        try {
          expect(said[1]).toMatch(/^started the embedded PostgreSQL store/);
          expect((await again.getSession(session.id))?.objective).toBe('open test');
        } finally {
          await again.close();
        }
      } finally {
        await stopEmbeddedStore(temp.dir);
        temp.remove();
      }
    },
    OPEN_TIMEOUT_MS,
  );
});

describe('describeStore', () => {
  it('names host, port and database of a PostgreSQL URL without user or password', () => {
    const text = describeStore({
      databaseUrl: 'postgres://alice:s3cr%40t@db.example.com:6543/goals',
      home: '/h',
    });
    expect(text).toBe('PostgreSQL at db.example.com:6543/goals');
    expect(text).not.toContain('s3cr');
  });

  it('fills in the default port and reads a socket host from the query', () => {
    expect(describeStore({ databaseUrl: 'postgresql://bob:pw@localhost/app', home: '/h' })).toBe(
      'PostgreSQL at localhost:5432/app',
    );
    expect(
      describeStore({ databaseUrl: 'postgres:///app?host=/var/run/postgresql&password=pw', home: '/h' }),
    ).toBe('PostgreSQL at /var/run/postgresql:5432/app');
  });

  it('shows nothing of a connection string that is not a URL', () => {
    const text = describeStore({ databaseUrl: 'host=db password=hunter2 dbname=app', home: '/h' });
    expect(text).not.toContain('hunter2');
    expect(text).toMatch(/^PostgreSQL/);
  });

  it('names the embedded store directory', () => {
    expect(describeStore({ home: '/home/me/.goalrun' })).toBe(
      'embedded PostgreSQL at /home/me/.goalrun/store-pg',
    );
    expect(describeStore({ home: 'rel', databaseUrl: '' })).toBe(
      `embedded PostgreSQL at ${path.resolve('rel/store-pg')}`,
    );
  });
});
