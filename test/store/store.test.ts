import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StoredMessage, userText } from '../../core/messages';
import { ensureEmbeddedStore, stopEmbeddedStore } from '../../store/embedded-server';
import { MIGRATIONS, migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import type { NewSession } from '../../store/types';
import { createTempDir, createTestDatabase } from './test-databases';

/** Creating an embedded PostgreSQL cluster (initdb) takes seconds. */
const SETUP_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = 30_000;

/** An empty database of one backend. */
interface FreshDatabase {
  /** A new client to the database. */
  connect(): Promise<SqlClient>;
  dispose(): Promise<void>;
}

interface Backend {
  name: string;
  fresh(): Promise<FreshDatabase>;
}

const postgres: Backend = {
  name: 'PostgreSQL',
  async fresh() {
    const database = await createTestDatabase();
    const clients: SqlClient[] = [];
    return {
      async connect() {
        const client = createPgClient(database.url);
        clients.push(client);
        return client;
      },
      async dispose() {
        await Promise.all(clients.map((client) => client.close()));
        await database.drop();
      },
    };
  },
};

/** goalrun's embedded PostgreSQL server, in a data directory of its own. */
const embedded: Backend = {
  name: 'embedded PostgreSQL',
  async fresh() {
    const temp = createTempDir('goalrun-store-test');
    const { url } = await ensureEmbeddedStore(temp.dir, { log: () => {} });
    const clients: SqlClient[] = [];
    return {
      async connect() {
        const client = createPgClient(url);
        clients.push(client);
        return client;
      },
      async dispose() {
        await Promise.all(clients.map((client) => client.close()));
        await stopEmbeddedStore(temp.dir);
        temp.remove();
      },
    };
  },
};

function assistantText(text: string): StoredMessage {
  return { role: 'assistant', content: [{ type: 'text', text }] };
}

describe.each([postgres, embedded])('session store on $name', (backend) => {
  let database: FreshDatabase;
  let client: SqlClient;
  let store: SqlSessionStore;
  let sessionCounter = 0;

  /** Creates a session with a unique id and returns its fields. */
  async function newSession(overrides: Partial<NewSession> = {}): Promise<NewSession> {
    sessionCounter++;
    const session: NewSession = {
      id: `abcdef012345-20261130T1521${String(sessionCounter).padStart(5, '0')}Z`,
      projectDir: '/work/project',
      projectHash: 'abcdef012345',
      objective: `objective ${sessionCounter}`,
      model: 'anthropic:claude-test',
      workflowId: `goal-${sessionCounter}`,
      ...overrides,
    };
    await store.createSession(session);
    return session;
  }

  async function countRows(table: string, sessionId: string): Promise<number> {
    const { rows } = await client.query<{ count: string | number }>(
      `SELECT count(*) AS count FROM ${table} WHERE session_id = $1`,
      [sessionId],
    );
    return Number(rows[0].count);
  }

  beforeAll(async () => {
    database = await backend.fresh();
    client = await database.connect();
    await migrate(client);
    store = new SqlSessionStore(client);
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await database?.dispose();
  }, SETUP_TIMEOUT_MS);

  describe('migrations', () => {
    it('records every migration once and applies nothing the second time', async () => {
      const { rows } = await client.query<{ id: number }>('SELECT id FROM goalrun_migrations ORDER BY id');
      expect(rows.map((row) => Number(row.id))).toEqual(MIGRATIONS.map((migration) => migration.id));
      expect(await migrate(client)).toEqual([]);
      const again = await client.query<{ id: number }>('SELECT id FROM goalrun_migrations ORDER BY id');
      expect(again.rows).toHaveLength(MIGRATIONS.length);
    });

    it('creates the tables of the store', async () => {
      const { rows } = await client.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
      );
      expect(rows.map((row) => row.table_name)).toEqual(
        expect.arrayContaining([
          'checkpoints',
          'events',
          'goalrun_migrations',
          'messages',
          'sessions',
          'spool',
        ]),
      );
    });

    it(
      'lets 4 concurrent migrate calls on a fresh database all succeed, applying each migration once',
      async () => {
        const fresh = await backend.fresh();
        try {
          const clients = await Promise.all([1, 2, 3, 4].map(() => fresh.connect()));
          const results = await Promise.all(clients.map((each) => migrate(each)));
          expect(results.flat().sort((a, b) => a - b)).toEqual(MIGRATIONS.map((migration) => migration.id));
          const { rows } = await clients[0].query<{ id: number }>(
            'SELECT id FROM goalrun_migrations ORDER BY id',
          );
          expect(rows.map((row) => Number(row.id))).toEqual(MIGRATIONS.map((migration) => migration.id));
          const freshStore = new SqlSessionStore(clients[0]);
          await freshStore.createSession({
            id: 's',
            projectDir: '/p',
            projectHash: 'h',
            objective: 'o',
            model: 'm',
            workflowId: 'w',
          });
          expect((await freshStore.getSession('s'))?.objective).toBe('o');
        } finally {
          await fresh.dispose();
        }
      },
      SETUP_TIMEOUT_MS,
    );
  });

  describe('sessions', () => {
    it('creates a session with defaults, and a second create with the same id changes nothing', async () => {
      const before = Date.now();
      const session = await newSession();
      await store.createSession({ ...session, objective: 'something else', model: 'other:model' });
      const after = Date.now();
      const row = await store.getSession(session.id);
      expect(row).toMatchObject({
        id: session.id,
        projectDir: session.projectDir,
        projectHash: session.projectHash,
        objective: session.objective,
        model: session.model,
        workflowId: session.workflowId,
        status: 'running',
        reason: null,
        goalState: null,
      });
      expect(row?.createdAt).toBeInstanceOf(Date);
      expect(row?.updatedAt).toBeInstanceOf(Date);
      // Stamped by the database when the row was made: between the moments around the create.
      expect(row?.createdAt.getTime()).toBeGreaterThanOrEqual(before);
      expect(row?.createdAt.getTime()).toBeLessThanOrEqual(after);
    });

    it('finds a session by id and by workflow id, and returns null for unknown ones', async () => {
      const session = await newSession();
      expect((await store.findSession(session.id))?.id).toBe(session.id);
      expect((await store.findSession(session.workflowId))?.id).toBe(session.id);
      expect(await store.findSession('no-such-session')).toBeNull();
      expect(await store.getSession('no-such-session')).toBeNull();
      expect(await store.getSession(session.workflowId)).toBeNull();
    });

    it('lists sessions newest first, up to the limit', async () => {
      const first = await newSession();
      const second = await newSession();
      const third = await newSession();
      const listed = await store.listSessions(3);
      expect(listed.map((row) => row.id)).toEqual([third.id, second.id, first.id]);
      expect(await store.listSessions(1)).toHaveLength(1);
      expect((await store.listSessions()).length).toBeGreaterThanOrEqual(3);
    });

    it('updates only the fields of the patch and stores goal state as plain JSON', async () => {
      const session = await newSession();
      const before = await store.getSession(session.id);
      const goalState = { iteration: 3, limits: [1, 2, 3], nested: { ok: true, none: null }, text: 'é✓🚀' };
      await store.updateSession(session.id, { status: 'blocked', reason: 'needs a key', goalState });
      let row = await store.getSession(session.id);
      expect(row).toMatchObject({
        status: 'blocked',
        reason: 'needs a key',
        goalState,
        model: session.model,
      });
      expect(row!.updatedAt.getTime()).toBeGreaterThanOrEqual(before!.updatedAt.getTime());

      await store.updateSession(session.id, { model: 'openai:gpt-test' });
      row = await store.getSession(session.id);
      expect(row).toMatchObject({
        status: 'blocked',
        reason: 'needs a key',
        goalState,
        model: 'openai:gpt-test',
      });

      await store.updateSession(session.id, { status: 'running', reason: null, goalState: null });
      row = await store.getSession(session.id);
      expect(row).toMatchObject({ status: 'running', reason: null, goalState: null });
    });

    it('stores a goal state that is a JSON array', async () => {
      const session = await newSession();
      await store.updateSession(session.id, { goalState: [{ id: 1 }, 'two', 3] });
      expect((await store.getSession(session.id))?.goalState).toEqual([{ id: 1 }, 'two', 3]);
    });
  });

  describe('messages', () => {
    it('returns messages in insertion order with strictly increasing seq', async () => {
      const session = await newSession();
      const messages: StoredMessage[] = [
        userText('do the thing ✓'),
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'running a tool' },
            {
              type: 'tool-call',
              toolCallId: 'call-1',
              toolName: 'bash',
              input: { command: 'ls', args: ['-l'] },
            },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'call-1',
              toolName: 'bash',
              output: { type: 'text', value: 'a\nb' },
            },
          ],
        },
        assistantText('done'),
      ];
      const seqs: number[] = [];
      for (const [index, message] of messages.entries()) {
        const result = await store.appendMessage(session.id, `step-${index}`, message);
        expect(result.created).toBe(true);
        seqs.push(result.seq);
      }
      for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]);

      const listed = await store.listMessages(session.id);
      expect(listed).toEqual(
        messages.map((message, index) => ({ seq: seqs[index], key: `step-${index}`, message })),
      );
      expect(await store.countMessages(session.id)).toBe(messages.length);
    });

    it('keeps the order of each session when appends of two sessions interleave', async () => {
      const a = await newSession();
      const b = await newSession();
      for (let i = 0; i < 5; i++) {
        await store.appendMessage(a.id, `a-${i}`, userText(`a ${i}`));
        await store.appendMessage(b.id, `b-${i}`, userText(`b ${i}`));
      }
      expect((await store.listMessages(a.id)).map((entry) => entry.key)).toEqual([
        'a-0',
        'a-1',
        'a-2',
        'a-3',
        'a-4',
      ]);
      expect((await store.listMessages(b.id)).map((entry) => entry.key)).toEqual([
        'b-0',
        'b-1',
        'b-2',
        'b-3',
        'b-4',
      ]);
      expect(await store.countMessages(a.id)).toBe(5);
    });

    it('is idempotent on the key: a second append returns the same seq, created false, and changes nothing', async () => {
      const session = await newSession();
      const first = await store.appendMessage(session.id, 'step-1', assistantText('original'));
      const second = await store.appendMessage(session.id, 'step-1', assistantText('a retry that differs'));
      expect(second).toEqual({ seq: first.seq, created: false });
      expect(await store.countMessages(session.id)).toBe(1);
      expect(await store.getMessageByKey(session.id, 'step-1')).toEqual({
        seq: first.seq,
        key: 'step-1',
        message: assistantText('original'),
      });
      const later = await store.appendMessage(session.id, 'step-2', assistantText('next'));
      expect(later.seq).toBeGreaterThan(first.seq);
    });

    it('writes one row when appends with the same key race', async () => {
      const session = await newSession();
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          store.appendMessage(session.id, 'racing-key', assistantText(`attempt ${index}`)),
        ),
      );
      expect(results.filter((result) => result.created)).toHaveLength(1);
      expect(new Set(results.map((result) => result.seq)).size).toBe(1);
      expect(await store.countMessages(session.id)).toBe(1);
      const stored = await store.getMessageByKey(session.id, 'racing-key');
      expect(stored?.seq).toBe(results[0].seq);
    });

    it('treats the same key in two sessions as two messages', async () => {
      const a = await newSession();
      const b = await newSession();
      expect((await store.appendMessage(a.id, 'k', userText('a'))).created).toBe(true);
      expect((await store.appendMessage(b.id, 'k', userText('b'))).created).toBe(true);
      expect((await store.getMessageByKey(b.id, 'k'))?.message).toEqual(userText('b'));
    });

    it('returns null for an unknown key and rejects a message of an unknown session', async () => {
      const session = await newSession();
      expect(await store.getMessageByKey(session.id, 'nope')).toBeNull();
      await expect(store.appendMessage('no-such-session', 'k', userText('x'))).rejects.toThrow();
    });

    it('lists a range of sequence numbers, inclusive at both ends', async () => {
      const session = await newSession();
      const seqs: number[] = [];
      for (let i = 0; i < 6; i++)
        seqs.push((await store.appendMessage(session.id, `m${i}`, userText(`${i}`))).seq);
      const keys = async (range: { fromSeq?: number; toSeq?: number }) =>
        (await store.listMessages(session.id, range)).map((entry) => entry.key);
      expect(await keys({ fromSeq: seqs[2] })).toEqual(['m2', 'm3', 'm4', 'm5']);
      expect(await keys({ toSeq: seqs[1] })).toEqual(['m0', 'm1']);
      expect(await keys({ fromSeq: seqs[1], toSeq: seqs[3] })).toEqual(['m1', 'm2', 'm3']);
      expect(await keys({ fromSeq: seqs[4], toSeq: seqs[4] })).toEqual(['m4']);
      expect(await keys({})).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
      expect(await keys({ fromSeq: seqs[5] + 1 })).toEqual([]);
    });
  });

  describe('events', () => {
    it('writes a keyed event once and every unkeyed event, in order, with plain JSON data', async () => {
      const session = await newSession();
      await store.appendEvent(session.id, 'progress', { step: 1, items: ['a', 'b'] }, 'progress-1');
      await store.appendEvent(session.id, 'progress', { step: 'again' }, 'progress-1');
      await store.appendEvent(session.id, 'notice', 'plain string');
      await store.appendEvent(session.id, 'notice', 'plain string');
      await store.appendEvent(session.id, 'list', [1, 2, 3]);
      await store.appendEvent(session.id, 'empty', null);

      const events = await store.listEvents(session.id);
      expect(events.map((event) => [event.kind, event.data])).toEqual([
        ['progress', { step: 1, items: ['a', 'b'] }],
        ['notice', 'plain string'],
        ['notice', 'plain string'],
        ['list', [1, 2, 3]],
        ['empty', null],
      ]);
      for (const event of events) {
        expect(event.sessionId).toBe(session.id);
        expect(event.createdAt).toBeInstanceOf(Date);
        expect(typeof event.id).toBe('number');
      }
      const after = await store.listEvents(session.id, events[2].id);
      expect(after.map((event) => event.kind)).toEqual(['list', 'empty']);
    });

    it('keeps the keys of two sessions apart', async () => {
      const a = await newSession();
      const b = await newSession();
      await store.appendEvent(a.id, 'tool', { n: 1 }, 'call-1');
      await store.appendEvent(b.id, 'tool', { n: 2 }, 'call-1');
      expect(await store.listEvents(a.id)).toHaveLength(1);
      expect((await store.listEvents(b.id))[0].data).toEqual({ n: 2 });
    });
  });

  describe('spool', () => {
    // 1-, 2-, 3- and 4-byte characters, so that page cuts land inside characters.
    const multiByteText = `${'ascii line\n'.repeat(3)}${'é ü ß — “quotes” ✓ 漢字 かな 🚀🎉 '.repeat(40)}end\n`;

    async function readAll(sessionId: string, spoolId: number, limit: number) {
      const pages = [];
      let offset: number | null = 0;
      while (offset !== null) {
        const page = await store.readSpool(sessionId, spoolId, offset, limit);
        expect(page).not.toBeNull();
        pages.push(page!);
        expect(pages.length).toBeLessThan(100_000);
        offset = page!.nextOffset;
      }
      return pages;
    }

    it('writes a spool entry once per key and keeps the first content', async () => {
      const session = await newSession();
      const first = await store.writeSpool(session.id, 'call-1', 'bash', 'first output');
      const again = await store.writeSpool(session.id, 'call-1', 'bash', 'a different retry output');
      expect(again.spoolId).toBe(first.spoolId);
      expect(await countRows('spool', session.id)).toBe(1);
      const page = await store.readSpool(session.id, first.spoolId, 0, 1000);
      expect(page).toEqual({
        spoolId: first.spoolId,
        toolName: 'bash',
        size: 12,
        offset: 0,
        content: 'first output',
        nextOffset: null,
      });
    });

    it.each([1, 2, 3, 4, 5, 7, 64, 1000, 100_000])(
      'pages multi-byte UTF-8 text %i bytes at a time, and the pages concatenate to the original',
      async (limit) => {
        const session = await newSession();
        const { spoolId } = await store.writeSpool(session.id, `call-${limit}`, 'read', multiByteText);
        const size = Buffer.byteLength(multiByteText, 'utf8');
        const pages = await readAll(session.id, spoolId, limit);
        expect(pages.map((page) => page.content).join('')).toBe(multiByteText);
        let expectedOffset = 0;
        for (const page of pages) {
          expect(page.size).toBe(size);
          expect(page.toolName).toBe('read');
          expect(page.offset).toBe(expectedOffset);
          const bytes = Buffer.byteLength(page.content, 'utf8');
          // A page never exceeds the limit, except to hold one whole character wider than the limit.
          expect(bytes).toBeLessThanOrEqual(Math.max(limit, 4));
          expect(bytes).toBeGreaterThan(0);
          expect(
            Buffer.from(multiByteText, 'utf8')
              .subarray(page.offset, page.offset + bytes)
              .toString('utf8'),
          ).toBe(page.content);
          expectedOffset += bytes;
          expect(page.nextOffset).toBe(expectedOffset < size ? expectedOffset : null);
        }
        expect(expectedOffset).toBe(size);
      },
      TEST_TIMEOUT_MS,
    );

    it('cuts pages at exact byte positions when they fall on character boundaries', async () => {
      const session = await newSession();
      const { spoolId } = await store.writeSpool(session.id, 'bytes', 'read', 'aé🚀b');
      // a=1 byte, é=2, 🚀=4, b=1: boundaries at 0, 1, 3, 7, 8.
      expect(await store.readSpool(session.id, spoolId, 0, 3)).toMatchObject({
        offset: 0,
        content: 'aé',
        nextOffset: 3,
      });
      expect(await store.readSpool(session.id, spoolId, 3, 4)).toMatchObject({
        offset: 3,
        content: '🚀',
        nextOffset: 7,
      });
      expect(await store.readSpool(session.id, spoolId, 3, 6)).toMatchObject({
        offset: 3,
        content: '🚀b',
        nextOffset: null,
      });
      // An end inside 🚀 moves back to its start.
      expect(await store.readSpool(session.id, spoolId, 0, 5)).toMatchObject({
        content: 'aé',
        nextOffset: 3,
      });
      // A start inside é moves back to its first byte.
      expect(await store.readSpool(session.id, spoolId, 2, 1)).toMatchObject({
        offset: 1,
        content: 'é',
        nextOffset: 3,
      });
      // A start inside 🚀 too, and a limit smaller than the character still returns it whole.
      expect(await store.readSpool(session.id, spoolId, 5, 1)).toMatchObject({
        offset: 3,
        content: '🚀',
        nextOffset: 7,
      });
    });

    it('reads a page from the middle of a large output', async () => {
      const session = await newSession();
      const line = (i: number) => `line ${String(i).padStart(6, '0')} ✓\n`;
      const big = Array.from({ length: 50_000 }, (_, i) => line(i)).join('');
      const { spoolId } = await store.writeSpool(session.id, 'big', 'bash', big);
      const lineBytes = Buffer.byteLength(line(0), 'utf8');
      const page = await store.readSpool(session.id, spoolId, lineBytes * 30_000, lineBytes * 2);
      expect(page?.content).toBe(line(30_000) + line(30_001));
      expect(page?.size).toBe(Buffer.byteLength(big, 'utf8'));
      expect(page?.nextOffset).toBe(lineBytes * 30_002);
    });

    it('returns an empty last page at or past the end, and null for an unknown or foreign spool id', async () => {
      const session = await newSession();
      const other = await newSession();
      const { spoolId } = await store.writeSpool(session.id, 'call', 'bash', 'héllo');
      expect(await store.readSpool(session.id, spoolId, 6, 10)).toMatchObject({
        offset: 6,
        content: '',
        nextOffset: null,
      });
      expect(await store.readSpool(session.id, spoolId, 600, 10)).toMatchObject({
        content: '',
        nextOffset: null,
      });
      expect(await store.readSpool(other.id, spoolId, 0, 10)).toBeNull();
      expect(await store.readSpool(session.id, spoolId + 1_000_000, 0, 10)).toBeNull();
      await expect(store.readSpool(session.id, spoolId, -1, 10)).rejects.toThrow(RangeError);
      await expect(store.readSpool(session.id, spoolId, 0, 0)).rejects.toThrow(RangeError);
    });

    it('stores an empty output', async () => {
      const session = await newSession();
      const { spoolId } = await store.writeSpool(session.id, 'empty', 'bash', '');
      expect(await store.readSpool(session.id, spoolId, 0, 10)).toMatchObject({
        size: 0,
        offset: 0,
        content: '',
        nextOffset: null,
      });
    });
  });

  describe('checkpoints', () => {
    it('returns the latest checkpoint of the session, or null before the first', async () => {
      const session = await newSession();
      const other = await newSession();
      expect(await store.latestCheckpoint(session.id)).toBeNull();
      await store.saveCheckpoint(session.id, { iteration: 1 }, [{ id: 't1', status: 'open' }]);
      await store.saveCheckpoint(session.id, { iteration: 2 }, [{ id: 't1', status: 'done' }]);
      await store.saveCheckpoint(other.id, { iteration: 99 }, []);
      const latest = await store.latestCheckpoint(session.id);
      expect(latest).toMatchObject({
        sessionId: session.id,
        goalState: { iteration: 2 },
        tasks: [{ id: 't1', status: 'done' }],
      });
      expect(latest?.createdAt).toBeInstanceOf(Date);
      expect((await store.latestCheckpoint(other.id))?.tasks).toEqual([]);
    });
  });

  describe('deleteSession', () => {
    it('deletes the session and its messages, events, spool and checkpoints, and nothing else', async () => {
      const doomed = await newSession();
      const kept = await newSession();
      for (const session of [doomed, kept]) {
        await store.appendMessage(session.id, 'm', userText('hi'));
        await store.appendEvent(session.id, 'notice', { a: 1 }, 'e');
        await store.appendEvent(session.id, 'notice', { a: 2 });
        await store.writeSpool(session.id, 'call', 'bash', 'output');
        await store.saveCheckpoint(session.id, { i: 1 }, []);
      }
      const { spoolId } = await store.writeSpool(doomed.id, 'call', 'bash', 'output');

      await store.deleteSession(doomed.id);

      expect(await store.getSession(doomed.id)).toBeNull();
      for (const table of ['messages', 'events', 'spool', 'checkpoints']) {
        expect(await countRows(table, doomed.id)).toBe(0);
      }
      expect(await store.readSpool(doomed.id, spoolId, 0, 10)).toBeNull();
      expect(await store.latestCheckpoint(doomed.id)).toBeNull();

      expect(await store.getSession(kept.id)).not.toBeNull();
      expect(await countRows('messages', kept.id)).toBe(1);
      expect(await countRows('events', kept.id)).toBe(2);
      expect(await countRows('spool', kept.id)).toBe(1);
      expect(await countRows('checkpoints', kept.id)).toBe(1);

      // Deleting again, or deleting an unknown session, is a no-op.
      await store.deleteSession(doomed.id);
    });
  });
});
