/**
 * `--include-partial-messages` on real PostgreSQL: the lease says whether a step streams its text,
 * the writer stores the pieces in order whatever the store's speed, a stream reads them attempt by
 * attempt after a position, and old pieces are pruned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_DELTA_FLUSH_MS, StreamDeltaWriter } from '../../activities/stream-delta-writer';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import type { StreamDelta } from '../../store/stream-deltas';
import { createTestDatabase, type TestDatabase } from './test-databases';

describe('streamed text of a model step', () => {
  let db: TestDatabase;
  let client: SqlClient;
  let store: SqlSessionStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    client = createPgClient(db.url);
    await migrate(client);
    store = new SqlSessionStore(client);
  });
  afterAll(async () => {
    await client.close();
    await db.drop();
  });

  it('is written only while a lease is held', async () => {
    expect(await store.streamWatched('s-lease')).toBe(false);
    await store.watchStream('s-lease', Date.now() + 60_000);
    expect(await store.streamWatched('s-lease')).toBe(true);
    // An earlier lease never shortens a later one.
    await store.watchStream('s-lease', Date.now() - 1_000);
    expect(await store.streamWatched('s-lease')).toBe(true);
    await client.query(
      "UPDATE stream_watchers SET until = now() - interval '1 second' WHERE session_id = 's-lease'",
    );
    expect(await store.streamWatched('s-lease')).toBe(false);
  });

  it('keeps the pieces in order and adds them up to the text, even when writes are slow', async () => {
    const slow = {
      appendStreamDelta: async (sessionId: string, delta: StreamDelta) => {
        // The first write is the slowest: later pieces must still land after it.
        await new Promise((resolve) => setTimeout(resolve, delta.seq === 0 ? 300 : 10));
        await store.appendStreamDelta(sessionId, delta);
      },
      pruneStreamDeltas: (sessionId: string, keepMs: number) => store.pruneStreamDeltas(sessionId, keepMs),
    };
    const writer = new StreamDeltaWriter(slow, 's-order', { execution: 1, step: 3, attempt: 2 });
    const pieces = ['Hel', 'lo, ', 'wor', 'ld', '!'];
    for (const piece of pieces) {
      writer.push(piece);
      await new Promise((resolve) => setTimeout(resolve, STREAM_DELTA_FLUSH_MS * 1.5));
    }
    await writer.close();
    const rows = await store.listStreamDeltas('s-order', { execution: 1, step: 3 }, { attempt: 0, seq: -1 });
    expect(rows.length).toBeGreaterThan(1);
    expect(rows.map((row) => row.text).join('')).toBe('Hello, world!');
    expect(rows.map((row) => row.seq)).toEqual(rows.map((_, i) => i));
    let offset = 0;
    for (const row of rows) {
      expect(row).toMatchObject({ attempt: 2, offset });
      offset += row.text.length;
    }
    // Read after a position: only what follows it.
    const after = await store.listStreamDeltas('s-order', { execution: 1, step: 3 }, { attempt: 2, seq: 0 });
    expect(after.map((row) => row.seq)).toEqual(rows.slice(1).map((row) => row.seq));
  });

  it('lists attempt by attempt and prunes old pieces', async () => {
    const at = { execution: 1, step: 1 };
    await store.appendStreamDelta('s-prune', { ...at, attempt: 2, seq: 0, offset: 0, text: 'again' });
    await store.appendStreamDelta('s-prune', { ...at, attempt: 1, seq: 0, offset: 0, text: 'first' });
    // A retried write of the same piece changes nothing.
    await store.appendStreamDelta('s-prune', { ...at, attempt: 1, seq: 0, offset: 0, text: 'other' });
    const rows = await store.listStreamDeltas('s-prune', at, { attempt: 0, seq: -1 });
    expect(rows.map((row) => [row.attempt, row.text])).toEqual([
      [1, 'first'],
      [2, 'again'],
    ]);
    await client.query(
      "UPDATE stream_deltas SET created_at = now() - interval '1 hour' WHERE session_id = 's-prune' AND attempt = 1",
    );
    await store.pruneStreamDeltas('s-prune', 60_000);
    const left = await store.listStreamDeltas('s-prune', at, { attempt: 0, seq: -1 });
    expect(left.map((row) => row.text)).toEqual(['again']);
  });
});
