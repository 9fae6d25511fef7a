/**
 * Issue 18 item 4: the store-wide daily budget on real PostgreSQL. Two clients (two pools, as two
 * workers would have) race many reservations for the last dollars: the ledger admits exactly what
 * fits, never more, and with providers reporting more than reserved it goes over by at most the
 * overrun of the calls in flight.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { createTestDatabase, type TestDatabase } from './test-databases';

/** Reservations each of the two workers fires at once. */
const RACERS_PER_WORKER = 40;
const SESSION_A = 'aaaaaaaaaaaa-20261201T000000000Z';
const SESSION_B = 'bbbbbbbbbbbb-20261201T000000000Z';

let database: TestDatabase;
let clients: SqlClient[];
let stores: SqlSessionStore[];

beforeAll(async () => {
  database = await createTestDatabase();
  clients = [createPgClient(database.url), createPgClient(database.url)];
  await migrate(clients[0]);
  stores = clients.map((client) => new SqlSessionStore(client));
});

afterAll(async () => {
  for (const client of clients ?? []) await client.close();
  await database?.drop();
});

async function resetLedger(capUsd: number | null): Promise<void> {
  await clients[0].query('DELETE FROM daily_spend');
  await stores[0].setDailyCap(capUsd);
}

describe('daily budget', () => {
  it('records nothing without a cap, and set/off round-trips', async () => {
    await resetLedger(null);
    expect(await stores[0].dailyCap()).toBeNull();
    expect(await stores[1].reserveDaily(SESSION_A, 'm', 5)).toEqual({ kind: 'none' });
    await stores[0].setDailyCap(2.5);
    expect(await stores[1].dailyCap()).toBe(2.5);
    const view = await stores[1].dailyBudgetView();
    expect(view).toMatchObject({ capUsd: 2.5, spentUsd: 0, reservedUsd: 0, lines: [] });
    expect(view.day).toBe(new Date().toISOString().slice(0, 10));
  });

  it('two workers racing for the last dollars take exactly what fits', async () => {
    await resetLedger(10);
    const attempts = [0, 1].flatMap((worker) =>
      Array.from({ length: RACERS_PER_WORKER }, (_, index) =>
        stores[worker].reserveDaily(index % 2 ? SESSION_A : SESSION_B, `model-${worker}`, 1),
      ),
    );
    const results = await Promise.all(attempts);
    const reserved = results.filter((result) => result.kind === 'reserved');
    expect(reserved).toHaveLength(10);
    const refused = results.find((result) => result.kind === 'refused');
    expect(refused).toMatchObject({ kind: 'refused', capUsd: 10, countedUsd: 10, reservationUsd: 1 });
    if (refused?.kind === 'refused') {
      const tomorrow = new Date();
      tomorrow.setUTCHours(24, 0, 0, 0);
      expect(refused.nextWindowAt).toBe(tomorrow.toISOString());
    }
    const view = await stores[0].dailyBudgetView();
    expect(view.reservedUsd).toBe(10);
    expect(view.spentUsd).toBe(0);
  });

  it('settling frees what a call did not use, and the view splits spend per goal and model', async () => {
    await resetLedger(3);
    const first = await stores[0].reserveDaily(SESSION_A, 'gpt-a', 2);
    const second = await stores[1].reserveDaily(SESSION_B, 'gpt-b', 2);
    expect(first.kind).toBe('reserved');
    expect(second.kind).toBe('refused');
    if (first.kind !== 'reserved') return;
    await stores[1].settleDaily(first.id, 0.5);
    const third = await stores[1].reserveDaily(SESSION_B, 'gpt-b', 2);
    expect(third.kind).toBe('reserved');
    const view = await stores[0].dailyBudgetView();
    expect(view.spentUsd).toBe(0.5);
    expect(view.reservedUsd).toBe(2);
    expect(view.lines).toEqual([
      { sessionId: SESSION_A, model: 'gpt-a', spentUsd: 0.5, reservedUsd: 0, calls: 1, retries: 0 },
      { sessionId: SESSION_B, model: 'gpt-b', spentUsd: 0, reservedUsd: 2, calls: 1, retries: 0 },
    ]);
    // A raise lets a refused reservation in.
    expect((await stores[0].reserveDaily(SESSION_A, 'gpt-a', 1)).kind).toBe('refused');
    await stores[1].setDailyCap(4);
    expect((await stores[0].reserveDaily(SESSION_A, 'gpt-a', 1)).kind).toBe('reserved');
  });

  it('with costs above the reservations, the ledger goes over by at most the calls in flight', async () => {
    const capUsd = 7.3;
    const reservationUsd = 0.4;
    /** Providers report up to half again the reservation. */
    const maxOverrun = reservationUsd * 0.5;
    await resetLedger(capUsd);
    let inFlight = 0;
    let maxInFlight = 0;
    let admitted = 0;
    const worker = async (store: SqlSessionStore, lane: number): Promise<void> => {
      for (;;) {
        const reservation = await store.reserveDaily(lane % 2 ? SESSION_A : SESSION_B, 'm', reservationUsd);
        if (reservation.kind !== 'reserved') return;
        admitted += 1;
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1 + ((lane * 7) % 5)));
        inFlight -= 1;
        await store.settleDaily(reservation.id, reservationUsd + maxOverrun * ((lane % 3) / 2));
      }
    };
    await Promise.all(Array.from({ length: 2 * 8 }, (_, lane) => worker(stores[lane % 2], lane)));
    const view = await stores[0].dailyBudgetView();
    expect(view.reservedUsd).toBe(0);
    expect(admitted).toBeGreaterThan(0);
    // Honest reservations alone would stay within the cap; only the overrun of calls admitted while
    // others were still running can push it over.
    expect(view.spentUsd).toBeLessThanOrEqual(capUsd + maxInFlight * maxOverrun + 1e-9);
    expect(view.spentUsd).toBeGreaterThan(capUsd - reservationUsd - maxOverrun);
  });
});

describe('paid calls in the daily ledger (issue 24 item 4, issue 26 item 5)', () => {
  const call = (key: string, costUsd: number, kind: 'answer' | 'retry' | 'summary' = 'answer') => ({
    sessionId: SESSION_A,
    key,
    kind,
    model: 'gpt-a',
    usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
    costUsd,
    atReservation: kind === 'retry',
  });

  it('are recorded without a cap, once per key, and a cap set later counts them', async () => {
    await resetLedger(null);
    expect(await stores[0].recordPaidCall(call('answer:1', 0.4))).toBe(true);
    // The same call recorded again (a retried write, another worker): still once.
    expect(await stores[1].recordPaidCall(call('answer:1', 0.4))).toBe(false);
    expect(await stores[0].recordPaidCall(call('retry:r/1:1', 0.3, 'retry'))).toBe(true);
    const morning = await stores[0].dailyBudgetView();
    expect(morning).toMatchObject({ capUsd: null, spentUsd: 0.7, reservedUsd: 0 });
    expect(morning.lines).toEqual([
      { sessionId: SESSION_A, model: 'gpt-a', spentUsd: 0.7, reservedUsd: 0, calls: 2, retries: 1 },
    ]);
    // A cap set at noon counts the morning: $0.70 spent leaves $0.30 of a $1 cap.
    await stores[0].setDailyCap(1);
    expect((await stores[1].reserveDaily(SESSION_B, 'gpt-b', 0.31)).kind).toBe('refused');
    expect((await stores[1].reserveDaily(SESSION_B, 'gpt-b', 0.3)).kind).toBe('reserved');
  });

  it('release the hold of their step, and a billed attempt taken back is gone', async () => {
    await resetLedger(5);
    const hold = await stores[0].reserveDaily(SESSION_A, 'gpt-a', 2);
    expect(hold.kind).toBe('reserved');
    if (hold.kind !== 'reserved') return;
    await stores[0].recordPaidCall(call('retry:r/2:1', 2, 'retry'));
    await stores[0].recordPaidCall(call('answer:2', 0.5));
    // While the step runs, its hold and its calls both count (never less than what was spent).
    expect(await stores[0].dailyBudgetView()).toMatchObject({ spentUsd: 2.5, reservedUsd: 2 });
    await stores[1].releaseDaily(hold.id);
    await stores[1].voidPaidAttempt(SESSION_A, 'retry:r/2:1');
    // Only a retry is taken back: an answer's row stays.
    await stores[1].voidPaidAttempt(SESSION_A, 'answer:2');
    const view = await stores[0].dailyBudgetView();
    expect(view).toMatchObject({ spentUsd: 0.5, reservedUsd: 0 });
    expect(view.lines).toEqual([
      { sessionId: SESSION_A, model: 'gpt-a', spentUsd: 0.5, reservedUsd: 0, calls: 1, retries: 0 },
    ]);
  });

  it('are read back by their key prefix, which a key with LIKE wildcards cannot widen', async () => {
    await resetLedger(null);
    await stores[0].recordPaidCall(call('retry:run_1/5:1', 0.1, 'retry'));
    await stores[0].recordPaidCall(call('retry:run_1/5:2', 0.2, 'retry'));
    await stores[0].recordPaidCall(call('retry:runX1/5:1', 0.4, 'retry'));
    await stores[0].recordPaidCall(call('retry:run_1/50:1', 0.8, 'retry'));
    const rows = await stores[1].paidCallsUnder(SESSION_A, 'retry:run_1/5:');
    expect(rows.map((row) => row.costUsd)).toEqual([0.1, 0.2]);
    expect(rows[0]).toEqual({
      usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
      costUsd: 0.1,
      atReservation: true,
    });
    expect(await stores[1].paidCallsUnder(SESSION_B, 'retry:run_1/5:')).toEqual([]);
  });
});
