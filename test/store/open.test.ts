import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userText } from '../../core/messages';
import { describeStore, openStore } from '../../store/open';
import { PGLITE_LOCK_FILE } from '../../store/sql';
import { createTempDir, createTestDatabase, type TestDatabase } from './test-databases';

/** Opening PGlite takes seconds (it boots PostgreSQL in WebAssembly). */
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
    'opens an embedded store under <home>/store, locks it while open, and keeps data across opens',
    async () => {
      const temp = createTempDir('goalrun-open-test');
      try {
        const store = await openStore({ home: temp.dir });
        const storeDir = path.join(temp.dir, 'store');
        expect(fs.existsSync(path.join(storeDir, PGLITE_LOCK_FILE))).toBe(true);
        await expect(openStore({ home: temp.dir })).rejects.toThrow(
          `The embedded store at ${storeDir} is in use by process ${process.pid}`,
        );
        await store.createSession(session);
        await store.close();
        expect(fs.existsSync(path.join(storeDir, PGLITE_LOCK_FILE))).toBe(false);

        const again = await openStore({ home: temp.dir });
        try {
          expect((await again.getSession(session.id))?.objective).toBe('open test');
        } finally {
          await again.close();
        }
      } finally {
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
    expect(describeStore({ home: '/home/me/.goalrun' })).toBe('embedded PGlite at /home/me/.goalrun/store');
    expect(describeStore({ home: 'rel', databaseUrl: '' })).toBe(
      `embedded PGlite at ${path.resolve('rel/store')}`,
    );
  });
});
