/**
 * The one-statement write (store/effects-write.ts) merges a state write in SQL. Over generated
 * sequences of writes it must leave exactly what applyStateWrite computes in JS, mirror status and
 * reason on the row the same way, keep a checkpoint for each full write, and log each event once.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GoalStatus } from '../../core/goal';
import { userText } from '../../core/messages';
import { applyStateWrite, type StateWrite } from '../../core/state-write';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { createTestDatabase, type TestDatabase } from './test-databases';

const value = fc.oneof(
  fc.integer(),
  fc.constant(null),
  fc.string({ maxLength: 8 }),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.integer(), { maxKeys: 2 }),
);
const statuses: GoalStatus[] = ['running', 'paused', 'completed', 'failed'];
/** Writes the workflow sends: top-level fields or `compaction.*` sub-fields, sometimes full. */
const stateWrite: fc.Arbitrary<StateWrite> = fc
  .record({
    top: fc.dictionary(fc.constantFrom('steps', 'iteration', 'tasks', 'usage'), value, { maxKeys: 3 }),
    // The saved state's own status and reason, which the row mirrors when a write names none.
    savedStatus: fc.option(fc.constantFrom(...statuses), { nil: undefined }),
    savedReason: fc.option(fc.option(fc.string({ maxLength: 6 }), { nil: null }), { nil: undefined }),
    nested: fc.dictionary(fc.constantFrom('plan', 'budget', 'autoCompact'), value, { maxKeys: 2 }),
    full: fc.boolean(),
    // The compaction state is an object or null, never a bare value.
    compactionWhole: fc.option(
      fc.oneof(fc.constant(null), fc.dictionary(fc.constantFrom('plan', 'budget'), value, { maxKeys: 2 })),
      { nil: undefined },
    ),
    status: fc.option(fc.constantFrom(...statuses), { nil: undefined }),
    reason: fc.option(fc.option(fc.string({ maxLength: 6 }), { nil: null }), { nil: undefined }),
  })
  .map(({ top, savedStatus, savedReason, nested, full, compactionWhole, status, reason }) => {
    const set: Record<string, unknown> = { ...top };
    if (savedStatus !== undefined) set.status = savedStatus;
    if (savedReason !== undefined) set.reason = savedReason;
    // A field goes either whole or by sub-fields in one write, never both (StateWriteTracker).
    if (compactionWhole !== undefined || full) set.compaction = compactionWhole ?? null;
    else for (const [sub, v] of Object.entries(nested)) set[`compaction.${sub}`] = v;
    return {
      set,
      ...(full ? { full: true } : {}),
      ...(status ? { status } : {}),
      ...(reason !== undefined ? { reason } : {}),
    };
  });

describe('the one-statement state write', () => {
  let db: TestDatabase;
  let client: SqlClient;
  let store: SqlSessionStore;
  let sessions = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = createPgClient(db.url);
    await migrate(client);
    store = new SqlSessionStore(client);
  });
  afterAll(async () => {
    await client?.close();
    await db?.drop();
  });

  it('leaves what applyStateWrite computes, with status, reason, checkpoints and events', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stateWrite, { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        async (writes, viaMessage) => {
          sessions++;
          const id = `effects-${sessions}`;
          await store.createSession({
            id,
            projectDir: '/ws',
            projectHash: 'h',
            objective: 'o',
            model: 'scripted:x',
            workflowId: `w-${id}`,
          });
          let expected: Record<string, unknown> | null = null;
          let status: string = 'running';
          let reason: string | null = null;
          for (const [index, write] of writes.entries()) {
            const event = { kind: 'notice', data: { index }, key: `e-${index}` };
            if (viaMessage) {
              await store.appendMessage(id, `m-${index}`, userText(`message ${index}`), {
                state: write,
                event,
              });
            } else {
              await store.writeGoalState(id, write, event);
            }
            expected = applyStateWrite(expected, write);
            status = write.status ?? (expected.status as string | undefined) ?? status;
            reason = write.reason !== undefined ? write.reason : ((expected.reason as string | null) ?? null);
          }
          const row = await store.getSession(id);
          expect(row?.goalState).toEqual(expected);
          expect(row?.status).toBe(status);
          expect(row?.reason).toBe(reason);
          const { rows } = await client.query<{ n: string }>(
            'SELECT count(*) AS n FROM checkpoints WHERE session_id = $1',
            [id],
          );
          expect(Number(rows[0].n)).toBe(writes.filter((write) => write.full).length);
          const events = await store.listEvents(id);
          expect(events.map((e) => e.data)).toEqual(writes.map((_, index) => ({ index })));
          if (viaMessage) expect(await store.countMessages(id)).toBe(writes.length);
        },
      ),
      { numRuns: 60 },
    );
  });
});
