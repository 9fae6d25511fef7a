/**
 * `--include-partial-messages` on real PostgreSQL: the printer puts a step's streamed pieces between
 * its `step_start` and its answer, attempt after attempt, prints the pieces of the step in progress
 * as they come, and prints none without the option.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStreamPrinter } from '../../cli/event-stream';
import { EVENT_KINDS } from '../../core/event-kinds';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { createTestDatabase, type TestDatabase } from './test-databases';

const SESSION = 'partial';

describe('text_delta events in the stream', () => {
  let db: TestDatabase;
  let client: SqlClient;
  let store: SqlSessionStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    client = createPgClient(db.url);
    await migrate(client);
    store = new SqlSessionStore(client);
    await store.createSession({
      id: SESSION,
      projectDir: '/ws',
      projectHash: 'h',
      objective: 'o',
      model: 'scripted:x',
      workflowId: 'w',
    });
  });
  afterAll(async () => {
    await client?.close();
    await db?.drop();
  });

  function printer(partialMessages: boolean) {
    const lines: string[] = [];
    const streamed = new EventStreamPrinter(store, SESSION, 0, (line) => lines.push(line), {
      partialMessages,
    });
    const printed = () =>
      lines.map((line) => {
        const event = JSON.parse(line);
        return event.type === 'text_delta' ? `delta ${event.attempt}:${event.text}` : event.type;
      });
    return { printer: streamed, printed };
  }

  it('prints the pieces in order between the step start and the answer, and only with the option', async () => {
    const at = { execution: 1, step: 1 };
    await store.appendEvent(
      SESSION,
      EVENT_KINDS.stepStart,
      { step: 1, model: 'scripted:x', execution: 1 },
      's1',
    );
    await store.appendStreamDelta(SESSION, { ...at, attempt: 1, seq: 0, offset: 0, text: 'Hel' });
    const live = printer(true);
    await live.printer.poll();
    // The step is in progress: its first piece is out already.
    expect(live.printed()).toEqual(['step_start', 'delta 1:Hel']);
    // The first attempt failed; the retry streams again from the start.
    await store.appendStreamDelta(SESSION, { ...at, attempt: 2, seq: 0, offset: 0, text: 'Hello' });
    await store.appendStreamDelta(SESSION, { ...at, attempt: 2, seq: 1, offset: 5, text: ', world' });
    await store.appendEvent(
      SESSION,
      EVENT_KINDS.modelUsage,
      { step: 1, model: 'scripted:x', text: 'Hello, world', toolCalls: [], usage: {} },
      'u1',
    );
    await live.printer.poll();
    const answered = [
      'step_start',
      'delta 1:Hel',
      'delta 2:Hello',
      'delta 2:, world',
      'assistant_text',
      'usage',
    ];
    expect(live.printed()).toEqual(answered);
    // A piece written once the answer was printed (an attempt still running elsewhere) is not printed.
    await store.appendStreamDelta(SESSION, { ...at, attempt: 3, seq: 0, offset: 0, text: 'late' });
    await live.printer.poll();
    expect(live.printed()).toEqual([
      'step_start',
      'delta 1:Hel',
      'delta 2:Hello',
      'delta 2:, world',
      'assistant_text',
      'usage',
    ]);

    // Replayed later, every stored piece of the step comes before its answer.
    const replay = printer(true);
    await replay.printer.poll(true);
    expect(replay.printed()).toEqual([...answered.slice(0, 4), 'delta 3:late', 'assistant_text', 'usage']);
    const plain = printer(false);
    await plain.printer.poll(true);
    expect(plain.printed()).toEqual(['step_start', 'assistant_text', 'usage']);
  });
});
