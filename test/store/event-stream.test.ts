/**
 * stream-json reads a session's events by id from the store. Ids are shared by every session, so a
 * session's own ids have gaps wherever another goal logged something: those must not hold the stream
 * back, while a real hole (a transaction that has not committed yet) must, until it commits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStreamPrinter } from '../../cli/event-stream';
import { EVENT_KINDS } from '../../core/event-kinds';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { createTestDatabase, type TestDatabase } from './test-databases';

const SESSIONS = ['mine', 'other-1', 'other-2'];
/** Steps each session logs, interleaved with the others. */
const STEPS = 40;

describe('the event stream of one session among many', () => {
  let db: TestDatabase;
  let client: SqlClient;
  let store: SqlSessionStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = createPgClient(db.url);
    await migrate(client);
    store = new SqlSessionStore(client);
    for (const id of SESSIONS) {
      await store.createSession({
        id,
        projectDir: '/ws',
        projectHash: 'h',
        objective: `objective of ${id}`,
        model: 'scripted:x',
        workflowId: `w-${id}`,
      });
    }
  });
  afterAll(async () => {
    await client?.close();
    await db?.drop();
  });

  function printer(): { printer: EventStreamPrinter; steps: () => number[] } {
    const lines: string[] = [];
    const streamed = new EventStreamPrinter(store, 'mine', 0, (line) => lines.push(line));
    const steps = () =>
      lines
        .map((line) => JSON.parse(line))
        .flatMap((event) => (event.type === 'step_start' ? [event.step] : []));
    return { printer: streamed, steps };
  }

  it('prints every event in one poll when the gaps in its ids are other sessions’ events', async () => {
    for (let step = 1; step <= STEPS; step++) {
      for (const id of SESSIONS) {
        await store.appendEvent(
          id,
          EVENT_KINDS.stepStart,
          { step, model: 'scripted:x' },
          `step-start:${step}`,
        );
      }
    }
    const { printer: streamed, steps } = printer();
    // Not the final poll: a poll that waited at each gap would print only the first event now.
    await streamed.poll();
    expect(steps()).toEqual(Array.from({ length: STEPS }, (_, index) => index + 1));
  });

  it('holds back what comes after a transaction that has not committed, and prints it once it has', async () => {
    const { printer: streamed, steps } = printer();
    await streamed.poll();
    const before = steps().length;
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let inserted!: () => void;
    const insertedOne = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    // An event of this session whose id is taken now but becomes visible only when it commits.
    const open = client.transaction(async (tx) => {
      await tx.query(`INSERT INTO events (session_id, kind, key, data) VALUES ($1, $2, $3, $4::jsonb)`, [
        'mine',
        EVENT_KINDS.stepStart,
        'late',
        JSON.stringify({ step: STEPS + 1, model: 'scripted:x' }),
      ]);
      inserted();
      await committed;
    });
    await insertedOne;
    await store.appendEvent('mine', EVENT_KINDS.stepStart, { step: STEPS + 2, model: 'scripted:x' }, 'after');
    await streamed.poll();
    expect(steps().length).toBe(before);
    commit();
    await open;
    await streamed.poll();
    expect(steps().slice(before)).toEqual([STEPS + 1, STEPS + 2]);
  });
});
