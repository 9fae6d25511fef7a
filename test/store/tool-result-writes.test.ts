/**
 * Storing a tool's result on real PostgreSQL: a result without a spool row goes in one statement,
 * message and event together or neither; a second attempt, a racing one or a leftover event of a
 * store that wrote them apart never leaves the message and its event disagreeing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKeys } from '../../core/store-keys';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import type { ToolResultRecord } from '../../store/types';
import { type CountingClient, countingClient } from './counting-client';
import { createTestDatabase, type TestDatabase } from './test-databases';

/** The record of call `callId` whose output is `output` (spooled when `spool`). */
function resultRecord(sessionId: string, callId: string, output: string, spool = false): ToolResultRecord {
  return {
    sessionId,
    toolCallId: callId,
    toolName: 'read',
    messageKey: storeKeys.toolResult(callId),
    eventKey: storeKeys.toolEvent(callId),
    ...(spool ? { spoolContent: output } : {}),
    message: (spoolId) => ({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: callId,
          toolName: 'read',
          output: { type: 'text', value: spoolId === undefined ? output : `${output} [spool ${spoolId}]` },
        },
      ],
    }),
    facts: {
      ok: true,
      changedWorkspace: false,
      bytes: output.length,
      lines: 1,
      firstLine: output,
      lastLine: output,
      argsDigest: '{"path":"a"}',
    },
    eventExtra: { attempt: 1, head: output },
  };
}

describe('a tool result written', () => {
  let database: TestDatabase;
  let client: CountingClient;
  let other: SqlClient;
  let sessions = 0;
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

  async function newSession(store: SqlSessionStore): Promise<string> {
    const id = `tool-result-${++sessions}`;
    await store.createSession({
      id,
      projectDir: '/p',
      projectHash: 'eeeeeeeeeeee',
      objective: 'o',
      model: 'm',
      workflowId: `goal-${id}`,
    });
    return id;
  }

  it('without a spool row takes one statement, message and event together', async () => {
    const store = new SqlSessionStore(client);
    const id = await newSession(store);
    const before = client.statements;
    const recorded = await store.recordToolResult(resultRecord(id, 'call-1', 'hello'));
    expect(client.statements - before).toBe(1);
    expect(recorded.created).toBe(true);
    expect(recorded.facts).toMatchObject({ ok: true, bytes: 5, firstLine: 'hello' });
    expect((await store.getMessageByKey(id, storeKeys.toolResult('call-1')))?.seq).toBe(recorded.seq);
    const event = await store.getEventByKey(id, storeKeys.toolEvent('call-1'));
    expect(event?.kind).toBe('tool');
    expect(event?.data).toMatchObject({ toolCallId: 'call-1', toolName: 'read', ok: true, head: 'hello' });
  });

  it('a second attempt gets the first one back and changes nothing of it', async () => {
    const store = new SqlSessionStore(client);
    const id = await newSession(store);
    const first = await store.recordToolResult(resultRecord(id, 'call-2', 'first'));
    const second = await store.recordToolResult(resultRecord(id, 'call-2', 'second, longer'));
    expect(second.created).toBe(false);
    expect(second.seq).toBe(first.seq);
    expect(second.facts).toMatchObject({ bytes: 5, firstLine: 'first' });
    expect(JSON.stringify(second.message)).toContain('first');
    const event = await store.getEventByKey(id, storeKeys.toolEvent('call-2'));
    expect(event?.data).toMatchObject({ head: 'first', bytes: 5 });
  });

  it('racing attempts on two connections: one stores, both answer with its result', async () => {
    const store = new SqlSessionStore(client);
    const rival = new SqlSessionStore(other);
    const id = await newSession(store);
    for (let round = 0; round < 10; round++) {
      const callId = `race-${round}`;
      const [a, b] = await Promise.all([
        store.recordToolResult(resultRecord(id, callId, `a${round}`)),
        rival.recordToolResult(resultRecord(id, callId, `b${round}`)),
      ]);
      expect([a.created, b.created].filter(Boolean)).toHaveLength(1);
      expect(a.seq).toBe(b.seq);
      const winner = a.created ? `a${round}` : `b${round}`;
      expect(a.facts.firstLine).toBe(winner);
      expect(b.facts.firstLine).toBe(winner);
      // The event describes the stored message, not the attempt that lost.
      const event = await store.getEventByKey(id, storeKeys.toolEvent(callId));
      expect(event?.data).toMatchObject({ head: winner });
    }
  });

  it('replaces an event a store left without its message', async () => {
    const store = new SqlSessionStore(client);
    const id = await newSession(store);
    await store.appendEvent(id, 'tool', { head: 'nobody saw this' }, storeKeys.toolEvent('call-3'));
    const recorded = await store.recordToolResult(resultRecord(id, 'call-3', 'seen'));
    expect(recorded.created).toBe(true);
    const event = await store.getEventByKey(id, storeKeys.toolEvent('call-3'));
    expect(event?.data).toMatchObject({ head: 'seen', toolCallId: 'call-3' });
  });

  it('with a spool row names the row in its message and facts', async () => {
    const store = new SqlSessionStore(client);
    const id = await newSession(store);
    const recorded = await store.recordToolResult(resultRecord(id, 'call-4', 'big output', true));
    expect(recorded.created).toBe(true);
    expect(recorded.facts.spoolId).toBeGreaterThan(0);
    expect(JSON.stringify(recorded.message)).toContain(`[spool ${recorded.facts.spoolId}]`);
    const event = await store.getEventByKey(id, storeKeys.toolEvent('call-4'));
    expect(event?.data).toMatchObject({ spoolId: recorded.facts.spoolId });
    const again = await store.recordToolResult(resultRecord(id, 'call-4', 'big output', true));
    expect(again).toMatchObject({ created: false, seq: recorded.seq });
    expect(again.facts.spoolId).toBe(recorded.facts.spoolId);
  });
});
