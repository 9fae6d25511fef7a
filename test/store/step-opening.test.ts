/**
 * A model step's opening on real PostgreSQL: the stored answer, the session and its watch come back
 * from one statement, which also announces the step once, and never for a session that is not there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKeys } from '../../core/store-keys';
import { migrate } from '../../store/migrations';
import { createPgClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { type CountingClient, countingClient } from './counting-client';
import { createTestDatabase, type TestDatabase } from './test-databases';

const stepStart = (step: number, model = 'm') => ({
  kind: 'step-start',
  data: { step, model, execution: 1 },
  key: storeKeys.stepStartEvent(1, step),
});

describe("a model step's opening", () => {
  let database: TestDatabase;
  let client: CountingClient;
  let store: SqlSessionStore;
  beforeAll(async () => {
    database = await createTestDatabase();
    client = countingClient(createPgClient(database.url));
    await migrate(client);
    store = new SqlSessionStore(client);
    await store.createSession({
      id: 'open-1',
      projectDir: '/p',
      projectHash: 'eeeeeeeeeeee',
      objective: 'find the bug',
      model: 'm',
      workflowId: 'goal-open-1',
    });
  });
  afterAll(async () => {
    await client?.close();
    await database?.drop();
  });

  it('reads the session and announces the step in one statement', async () => {
    const answerKey = storeKeys.assistant(1, 1);
    const before = client.statements;
    const opening = await store.openStep('open-1', answerKey, stepStart(1));
    expect(client.statements - before).toBe(1);
    expect(opening.stored).toBeNull();
    expect(opening.watched).toBe(false);
    expect(opening.session).toMatchObject({
      id: 'open-1',
      objective: 'find the bug',
      projectDir: '/p',
      workflowId: 'goal-open-1',
    });
    expect(opening.session?.createdAt).toBeInstanceOf(Date);
    const event = await store.getEventByKey('open-1', storeKeys.stepStartEvent(1, 1));
    expect(event).toMatchObject({ kind: 'step-start', data: { step: 1, model: 'm', execution: 1 } });
  });

  it('finds the answer an earlier attempt stored, and announces the step only once', async () => {
    const answerKey = storeKeys.assistant(1, 2);
    await store.openStep('open-1', answerKey, stepStart(2, 'first'));
    await store.appendMessage(
      'open-1',
      answerKey,
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'the bug is in parse()' }],
      },
      { meta: { model: 'first', finishReason: 'stop' } },
    );
    const retry = await store.openStep('open-1', answerKey, stepStart(2, 'second'));
    expect(retry.stored?.key).toBe(answerKey);
    expect(retry.stored?.message).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'the bug is in parse()' }],
    });
    expect(retry.stored?.meta).toMatchObject({ model: 'first' });
    expect(retry.session?.id).toBe('open-1');
    const events = (await store.listEvents('open-1')).filter((e) => e.kind === 'step-start');
    expect(events.map((e) => e.data)).toEqual([
      { step: 1, model: 'm', execution: 1 },
      { step: 2, model: 'first', execution: 1 },
    ]);
  });

  it('says when someone watches the stream, and not once the lease ran out', async () => {
    await store.watchStream('open-1', Date.now() + 60_000);
    expect((await store.openStep('open-1', storeKeys.assistant(1, 3), stepStart(3))).watched).toBe(true);
    await store.createSession({
      id: 'open-2',
      projectDir: '/p',
      projectHash: 'eeeeeeeeeeee',
      objective: 'o',
      model: 'm',
      workflowId: 'goal-open-2',
    });
    await store.watchStream('open-2', Date.now() - 1_000);
    expect((await store.openStep('open-2', storeKeys.assistant(1, 1), stepStart(1))).watched).toBe(false);
  });

  it('finds no session and writes nothing for one that is not there', async () => {
    const opening = await store.openStep('open-missing', storeKeys.assistant(1, 1), stepStart(1));
    expect(opening).toEqual({ stored: null, session: null, watched: false });
    expect(await store.listEvents('open-missing')).toEqual([]);
  });
});
