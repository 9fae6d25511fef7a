/**
 * Issue 24 item 5: a wait at the store-wide daily budget does not poll forever in one run. With the
 * dev server suggesting continue-as-new after a few dozen events, a goal waiting at the daily cap
 * continues as new during the wait, the next run goes on waiting (status budget_reached throughout,
 * no second cap event), and budget_wait_minutes (3) is counted from the wait's start across runs:
 * the goal ends as budget_reached, saying how to raise the daily budget. The test has a database of
 * its own (a daily budget is store-wide) and a Temporal server of its own (the dynamic config).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../store/test-databases';
import { killAndWait, runCli, spawnCli } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { fetchHistory } from '../support/history';
import { type OpenAITestServer, requestStep, startOpenAITestServer } from '../support/openai-test-server';
import { PRICED_MODEL, writePricedModelCard } from '../support/priced-model';
import { startTestTemporalServer, type TestTemporalServer } from '../support/temporal-server';

const WAIT_MINUTES = 3;
/** How long `watch` may take to see the goal reach the cap (a worker's start and a step, under load). */
const WATCH_TIMEOUT_MS = 240_000;

describe('a daily-budget wait across continue-as-new', () => {
  let server: OpenAITestServer;
  let temporal: TestTemporalServer;
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    temporal = await startTestTemporalServer({
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 30 },
    });
    // Step 1 runs a command and costs $0.01; a second call would reserve $0.01 more, over $0.015.
    server = await startOpenAITestServer({
      fallback: (body) =>
        requestStep(body) === 1
          ? {
              toolCalls: [{ name: 'bash', args: { command: 'echo working' } }],
              usage: { prompt_tokens: 300, completion_tokens: 1_000 },
            }
          : {
              toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'never reached' } }],
              usage: { prompt_tokens: 300, completion_tokens: 1_000 },
            },
    });
  });
  afterAll(async () => {
    await server?.close();
    await temporal?.stop();
    await database?.drop();
  });

  it('continues as new while it waits, and ends after budget_wait_minutes counted across runs', {
    timeout: 600_000,
  }, async () => {
    const t = goalTestEnv('daily-can', {
      OPENAI_API_KEY: 'sk-test',
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: temporal.address,
    });
    writePricedModelCard(t.home);
    fs.writeFileSync(path.join(t.home, 'config.json'), JSON.stringify({ budget_wait_minutes: WAIT_MINUTES }));
    const set = await runCli(['budget', 'set', '--daily-usd', '0.015'], t.env);
    expect(set.code, set.stderr).toBe(0);
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId, workflowId, runId } = await startGoal(
        t,
        server,
        'spend past the day',
        [],
        PRICED_MODEL,
      );
      // On a loaded machine the worker's start and the first step can take minutes: watch waits for them.
      const watched = await runCli(['watch', sessionId, '--json'], t.env, WATCH_TIMEOUT_MS);
      expect(watched.code, watched.stderr).toBe(4);
      expect(JSON.parse(watched.stdout)).toMatchObject({ status: 'budget_reached', steps: 1 });

      // The workflow ends once the wait has run out; the whole wait is spent waiting for that.
      const connection = await Connection.connect({ address: temporal.address });
      try {
        const handle = new Client({ connection }).workflow.getHandle(workflowId);
        const final = await handle.result();
        expect(final.status).toBe('budget_reached');
        expect(final.reason).toBe(
          `daily budget reached, and no raise came in ${WAIT_MINUTES} minutes (budget_wait_minutes); raise it with: goalrun budget set --daily-usd N, then goalrun resume ${sessionId}`,
        );
        const described = await handle.describe();
        expect(described.runId).not.toBe(runId);
        // The wait ran its minutes, measured from when it began (its cap event) to when the goal closed,
        // not from when this test happened to see it: a late look would shorten it.
        const store = await testStore(database.url);
        try {
          const cap = (await store.listEvents(sessionId)).find((event) => event.kind === 'budget');
          expect(cap).toBeDefined();
          const waited = (described.closeTime?.getTime() ?? 0) - (cap?.createdAt.getTime() ?? 0);
          expect(waited).toBeGreaterThanOrEqual((WAIT_MINUTES - 1) * 60_000);
        } finally {
          await store.close();
        }
      } finally {
        await connection.close();
      }
      // The first run handed over by continue-as-new; only one request was ever made.
      const firstRun = await fetchHistory(temporal.address, workflowId, runId);
      expect(firstRun.at(-1)!.event.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
      expect(server.requests).toHaveLength(1);
      // One cap event for the whole wait, whatever the number of runs.
      const store = await testStore(database.url);
      try {
        const events = await store.listEvents(sessionId);
        const budget = events.filter((event) => event.kind === 'budget');
        expect(budget.map((event) => (event.data as { at: string }).at)).toEqual(['cap']);
      } finally {
        await store.close();
      }
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
