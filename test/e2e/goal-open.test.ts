/**
 * A new goal opens in one local activity (patch open-in-one-call): openSession also resolves the
 * model budget and reads the store's daily cap, so no resolveModelBudget marker follows it, and no
 * reserveDailyBudget while the store has no cap. With a cap set, the first step still reserves. Each
 * case has a database of its own: a daily cap is store-wide and would hold other files' goals.
 */
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../store/test-databases';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { fetchHistory, localActivities } from '../support/history';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The event id of the first modelStep's scheduling. */
function firstModelStep(events: HistoryEvent[]): number {
  const event = events.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelStep',
  );
  return Number(event?.eventId);
}

const TURNS = [
  { toolCalls: [{ name: 'bash', args: { command: 'echo one' } }] },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] },
];

describe('a new goal opens in one local activity', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  async function runGoal(name: string) {
    const t = goalTestEnv(name, { DATABASE_URL: database.url });
    const result = await runCli(
      [
        'run',
        'say one',
        '--workspace',
        t.workspace,
        '--model',
        scriptedModel(t.home, TURNS),
        '--context-window',
        '50000',
        '--json',
      ],
      t.env,
      120_000,
    );
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status.status).toBe('completed');
    const events = (await fetchHistory(t.temporalAddress, status.workflowId)).map(({ event }) => event);
    return { t, events };
  }

  it('resolves the budget and finds no daily cap in openSession, with no other local activity before the first step', {
    timeout: 180_000,
  }, async () => {
    const { events } = await runGoal('open-no-cap');
    const markers = localActivities(events);
    const beforeFirstStep = markers.filter((m) => m.eventId < firstModelStep(events));
    expect(beforeFirstStep.map((m) => m.type)).toEqual(['openSession']);
    const opened = beforeFirstStep[0].result as {
      budget?: { budget: { windowTokens: number } };
      dailyCapUsd?: number | null;
    };
    // The window the goal was given is what the budget the goal then runs on was computed from.
    expect(opened.budget?.budget.windowTokens).toBe(50_000);
    expect(opened.dailyCapUsd).toBeNull();
    const types = markers.map((m) => m.type);
    expect(types).not.toContain('resolveModelBudget');
    expect(types).not.toContain('reserveDailyBudget');
  });

  it('still reserves the first call when the store has a daily cap', { timeout: 180_000 }, async () => {
    const setup = goalTestEnv('open-cap-setup', { DATABASE_URL: database.url });
    const set = await runCli(['budget', 'set', '--daily-usd', '100'], setup.env);
    expect(set.code, set.stderr).toBe(0);
    try {
      const { events } = await runGoal('open-cap');
      const markers = localActivities(events);
      const beforeFirstStep = markers.filter((m) => m.eventId < firstModelStep(events));
      expect(beforeFirstStep.map((m) => m.type)).toEqual(['openSession', 'reserveDailyBudget']);
      expect((beforeFirstStep[0].result as { dailyCapUsd?: number }).dailyCapUsd).toBe(100);
      expect(beforeFirstStep[1].result).toMatchObject({ kind: 'reserved' });
      expect(markers.map((m) => m.type)).not.toContain('resolveModelBudget');
    } finally {
      await runCli(['budget', 'set', '--daily-usd', 'off'], setup.env);
    }
  });
});
