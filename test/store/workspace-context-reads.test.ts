/**
 * The reads on every step's path, on real PostgreSQL: a step's execution's workspace context comes
 * from memory once read (its row never changes), an older execution's row is never kept for a newer
 * one, and a tool call's two messages come back from one statement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userText } from '../../core/messages';
import { storeKeys } from '../../core/store-keys';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { type CountingClient, countingClient } from './counting-client';
import { createTestDatabase, type TestDatabase } from './test-databases';

describe('the reads of a step', () => {
  let database: TestDatabase;
  let client: CountingClient;
  let other: SqlClient;
  beforeAll(async () => {
    database = await createTestDatabase();
    client = countingClient(createPgClient(database.url));
    other = createPgClient(database.url);
    await migrate(client);
  });
  afterAll(async () => {
    await client?.close();
    await other?.close();
    await database?.drop();
  });

  it("keeps an execution's own workspace context after one read, and never an older one for it", async () => {
    const store = new SqlSessionStore(client);
    // Another worker process: it writes the rows, so this store learns them only by reading.
    const writer = new SqlSessionStore(other);
    await writer.saveWorkspaceContext('ctx-1', 1, { instructions: 'first' });

    const before = client.contextReads;
    // Execution 2 has not gathered yet: the newest row is execution 1's, and it must not be kept for 2.
    expect(await store.latestWorkspaceContext('ctx-1', 2)).toEqual({
      execution: 1,
      data: { instructions: 'first' },
    });
    await writer.saveWorkspaceContext('ctx-1', 2, { instructions: 'second' });
    expect(await store.latestWorkspaceContext('ctx-1', 2)).toEqual({
      execution: 2,
      data: { instructions: 'second' },
    });
    expect(client.contextReads - before).toBe(2);

    // From now on execution 2's steps read it from memory.
    for (let step = 0; step < 5; step++)
      expect((await store.latestWorkspaceContext('ctx-1', 2))?.data).toEqual({ instructions: 'second' });
    expect(client.contextReads - before).toBe(2);

    // A caller that names no execution (a run of an older build) reads the newest row each time.
    await store.latestWorkspaceContext('ctx-1');
    await store.latestWorkspaceContext('ctx-1');
    expect(client.contextReads - before).toBe(4);
  });

  it('knows the row it wrote itself without reading it back', async () => {
    const store = new SqlSessionStore(client);
    await store.saveWorkspaceContext('ctx-2', 3, { instructions: 'mine' });
    const before = client.contextReads;
    expect(await store.latestWorkspaceContext('ctx-2', 3)).toEqual({
      execution: 3,
      data: { instructions: 'mine' },
    });
    expect(client.contextReads).toBe(before);
    // A retried gather gets the first row's data back, and so do the steps after it.
    const again = await store.saveWorkspaceContext('ctx-2', 3, { instructions: 'a retry saw this' });
    expect(again).toEqual({ data: { instructions: 'mine' }, created: false });
    expect((await store.latestWorkspaceContext('ctx-2', 3))?.data).toEqual({ instructions: 'mine' });
  });

  it('forgets a cleaned session: a later read goes to the store', async () => {
    const store = new SqlSessionStore(client);
    await store.createSession({
      id: 'ctx-3',
      projectDir: '/p',
      projectHash: 'eeeeeeeeeeee',
      objective: 'o',
      model: 'm',
      workflowId: 'goal-ctx-3',
    });
    await store.saveWorkspaceContext('ctx-3', 1, { instructions: 'x' });
    await store.updateSession('ctx-3', { status: 'completed' });
    expect(await store.cleanSession('ctx-3', ['completed'])).toBe(true);
    expect(await store.latestWorkspaceContext('ctx-3', 1)).toBeNull();
  });

  it("reads a tool call's result and its step's answer in one statement", async () => {
    const store = new SqlSessionStore(client);
    await store.createSession({
      id: 'ctx-4',
      projectDir: '/p',
      projectHash: 'eeeeeeeeeeee',
      objective: 'o',
      model: 'm',
      workflowId: 'goal-ctx-4',
    });
    const assistantKey = storeKeys.assistant(1, 1);
    const resultKey = storeKeys.toolResult('call-a');
    await store.appendMessage('ctx-4', assistantKey, {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'call-a', toolName: 'read', input: { path: 'a' } }],
    });
    await store.appendMessage('ctx-4', 'initial', userText('hello'));
    const before = client.statements;
    const found = await store.getMessagesByKeys('ctx-4', [resultKey, assistantKey]);
    expect(client.statements - before).toBe(1);
    expect([...found.keys()]).toEqual([assistantKey]);
    expect(found.get(assistantKey)?.message.role).toBe('assistant');
    expect(await store.getMessagesByKeys('ctx-4', [])).toEqual(new Map());
  });
});
