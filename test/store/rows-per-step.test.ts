/**
 * Issue 9 item 10: building a step's request reads a number of store rows bounded by the context,
 * not by the session's age. A 300-step session is built up as a goal builds it (assistant calls,
 * tool results with their stub facts, a summary every 20 steps moving the tail on, old results
 * stubbed); the rows read to build each request are counted at the start and at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildContext } from '../../activities/context-builder';
import { type ContextPlan, initialContextPlan } from '../../core/context-plan';
import { userText } from '../../core/messages';
import { storeKeys } from '../../core/store-keys';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient, type SqlExecutor } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { createTestDatabase, type TestDatabase } from './test-databases';

const STEPS = 300;
const SUMMARY_EVERY = 20;

/** A client that counts the rows its queries return. */
function countingClient(inner: SqlClient): SqlClient & { rows: number } {
  const counted = {
    rows: 0,
    async query<T>(text: string, params?: unknown[]) {
      const result = await inner.query<T>(text, params);
      counted.rows += result.rows.length;
      return result;
    },
    exec: (script: string) => inner.exec(script),
    transaction: <T>(fn: (tx: SqlExecutor) => Promise<T>) => inner.transaction(fn),
    close: () => inner.close(),
  };
  return counted;
}

describe('rows read per step', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  it('do not grow with the age of the session', async () => {
    const client = countingClient(createPgClient(db.url));
    await migrate(client);
    const store = new SqlSessionStore(client);
    const sessionId = 'rows-1';
    await store.createSession({
      id: sessionId,
      projectDir: '/ws',
      projectHash: 'h',
      objective: 'o',
      model: 'scripted:x',
      workflowId: 'w',
    });
    const first = await store.appendMessage(sessionId, 'initial', userText('the objective'));
    let plan: ContextPlan = initialContextPlan(first.seq);
    let lastSeq = first.seq;
    const readsAt: number[] = [];
    for (let step = 1; step <= STEPS; step++) {
      client.rows = 0;
      await buildContext(store, sessionId, lastSeq, plan);
      readsAt.push(client.rows);
      const callId = `call-${step}`;
      const assistant = await store.appendMessage(sessionId, storeKeys.assistant(1, step), {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: callId, toolName: 'bash', input: { command: `echo ${step}` } },
        ],
      });
      const output = `line ${step}\n`.repeat(50);
      const spoolId =
        step % 3 === 0 ? (await store.writeSpool(sessionId, callId, 'bash', output)).spoolId : undefined;
      const result = await store.appendMessage(
        sessionId,
        storeKeys.toolResult(callId),
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: callId,
              toolName: 'bash',
              output: { type: 'text', value: output },
            },
          ],
        },
        {
          meta: {
            tool: {
              ok: true,
              bytes: output.length,
              lines: 50,
              firstLine: `line ${step}`,
              lastLine: `line ${step}`,
              spoolId,
            },
          },
        },
      );
      lastSeq = result.seq;
      // Old results in the tail are shown as stubs, as pruning would.
      plan = { ...plan, stubSeqs: [...plan.stubSeqs, ...(step > 3 ? [result.seq - 6] : [])] };
      if (step % SUMMARY_EVERY === 0) {
        const summary = await store.appendMessage(
          sessionId,
          storeKeys.summary(step / SUMMARY_EVERY),
          userText(`summary ${step}`),
        );
        lastSeq = summary.seq;
        // The tail after a summary: the last three exchanges.
        plan = { ...plan, summarySeq: summary.seq, fromSeq: assistant.seq - 4, stubSeqs: [] };
      }
    }
    const early = Math.max(...readsAt.slice(SUMMARY_EVERY, 2 * SUMMARY_EVERY));
    const late = Math.max(...readsAt.slice(STEPS - SUMMARY_EVERY));
    expect(early).toBeGreaterThan(0);
    expect(late).toBeLessThanOrEqual(early);
    await store.close();
  });
});
