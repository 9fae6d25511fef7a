/**
 * Issue 17 (retention) through the built CLI: with `retention: { older_than, keep }` in the config,
 * a starting worker creates the Temporal Schedule of the daily clean (checked on the server through
 * the client), `goalrun clean --schedule` shows it, and triggering it once removes exactly what
 * `goalrun clean --all --yes` with the same rule would, leaving a running session alone. Without
 * retention in the config, `clean --schedule --yes` deletes the schedule: nothing is deleted by itself.
 * The test has a database of its own: the scheduled clean covers every project of its store.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RETENTION_SCHEDULE_HOUR_UTC,
  RETENTION_SCHEDULE_MINUTE,
  retentionScheduleId,
} from '../../core/retention-schedule';
import { workflowIdOf } from '../../core/workflow-names';
import { createPgClient } from '../../store/sql';
import { createTestDatabase, type TestDatabase } from '../store/test-databases';
import { expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import {
  type HoldingFinishServer,
  startHoldingFinishServer,
  waitForExecutionDeleted,
} from '../support/goal-steps';
import type { OpenAITestServer } from '../support/openai-test-server';

const MODEL = 'openai-compatible:test-model';
/** Generous: the machine is shared by many test processes. */
const SLOW_MS = 120_000;

describe('retention schedule', () => {
  let finisher: HoldingFinishServer;
  let server: OpenAITestServer;
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    finisher = await startHoldingFinishServer((body) => JSON.stringify(body).includes('keep running'));
    server = finisher.server;
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it('is created by the worker, shown by clean --schedule, and removes what clean --yes would', async () => {
    const t = goalTestEnv('retention', { DATABASE_URL: database.url });
    const configPath = path.join(t.home, 'config.json');
    fs.writeFileSync(configPath, JSON.stringify({ retention: { older_than: '30d', keep: 1 } }));
    const run = async (objective: string, extra: string[] = []) => {
      const result = await runCli(
        ['run', objective, '--model', MODEL, '--base-url', server.url, '--json', ...extra],
        t.env,
        SLOW_MS,
        { cwd: t.workspace },
      );
      return expectJson(result).sessionId as string;
    };
    const [old1, old2, named, fresh] = [
      await run('one'),
      await run('two'),
      await run('three', ['--name', 'kept by name']),
      await run('four'),
    ];
    const db = createPgClient(database.url);
    // Age all but the newest past older_than, as if they had stopped 40 days ago.
    await db.query(`UPDATE sessions SET updated_at = now() - interval '40 days' WHERE id = ANY($1::text[])`, [
      [old1, old2, named],
    ]);
    finisher.hold();
    const worker = spawnCli(['worker'], t.env);
    const temporal = new Client({ connection: await Connection.connect({ address: t.temporalAddress }) });
    const scheduleId = retentionScheduleId(t.taskQueue);
    try {
      await waitFor('the worker to create the schedule', () =>
        worker.output().includes(`retention schedule ${scheduleId} created`),
      );
      const description = await temporal.schedule.getHandle(scheduleId).describe();
      expect(description.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: 'retentionWorkflow',
        taskQueue: t.taskQueue,
        args: [{ olderThan: '30d', keep: 1 }],
      });
      expect(description.spec.calendars).toHaveLength(1);
      const next = description.info.nextActionTimes[0];
      expect([next.getUTCHours(), next.getUTCMinutes()]).toEqual([
        RETENTION_SCHEDULE_HOUR_UTC,
        RETENTION_SCHEDULE_MINUTE,
      ]);
      expect(next.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
      expect(description.state.paused).toBe(false);

      const shown = await runCli(['clean', '--schedule'], t.env, SLOW_MS, { cwd: t.workspace });
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain(`retention schedule ${scheduleId}`);
      expect(shown.stdout).toContain('daily at 03:17 UTC');
      expect(shown.stdout).toContain('sessions idle over 30d, keeping the newest 1 per project');
      expect(shown.stdout).toContain('last run:  none yet');

      const started = await runCli(
        ['start', 'keep running', '--model', MODEL, '--base-url', server.url, '--json'],
        t.env,
        SLOW_MS,
        { cwd: t.workspace },
      );
      expect(started.code, started.stderr).toBe(0);
      const runningId = JSON.parse(started.stdout).sessionId as string;
      await waitFor('the held goal to call the model', () =>
        server.requests.some((r) => JSON.stringify(r.body).includes('keep running')),
      );
      // Old as well, and still never cleaned: it runs.
      await db.query(`UPDATE sessions SET updated_at = now() - interval '60 days' WHERE id = $1`, [
        runningId,
      ]);

      const dry = await runCli(['clean', '--all', '--older-than', '30d', '--keep', '1', '--json'], t.env);
      expect(dry.code, dry.stderr).toBe(0);
      const wouldGo = (JSON.parse(dry.stdout) as { sessions: Array<{ sessionId: string }> }).sessions
        .map((s) => s.sessionId)
        .sort();
      // fresh is the newest kept; named is kept by its name; the running one is never chosen.
      expect(wouldGo).toEqual([old1, old2].sort());

      await temporal.schedule.getHandle(scheduleId).trigger();
      const action = await waitFor(
        'the schedule to start its workflow',
        async () => (await temporal.schedule.getHandle(scheduleId).describe()).info.recentActions[0],
        SLOW_MS,
      );
      const result = await temporal.workflow
        .getHandle(action.action.workflow.workflowId, action.action.workflow.firstExecutionRunId)
        .result();
      expect(result).toEqual({ removed: 2, skipped: 0 });

      const { rows } = await db.query<{ id: string; cleaned: boolean; messages: number }>(
        `SELECT s.id, s.cleaned_at IS NOT NULL AS cleaned,
                (SELECT count(*)::int FROM messages m WHERE m.session_id = s.id) AS messages
           FROM sessions s`,
      );
      const cleaned = rows.filter((row) => row.cleaned).map((row) => row.id);
      expect(cleaned.sort()).toEqual(wouldGo);
      for (const row of rows) expect(row.messages === 0, row.id).toBe(row.cleaned);
      expect(rows.map((row) => row.id).sort()).toEqual([old1, old2, named, fresh, runningId].sort());
      // Temporal deletes an execution in the background after DeleteWorkflowExecution returns.
      for (const id of wouldGo) await waitForExecutionDeleted(temporal, id);
      expect((await temporal.workflow.getHandle(workflowIdOf(runningId)).describe()).status.name).toBe(
        'RUNNING',
      );

      const after = await runCli(['clean', '--schedule', '--json'], t.env, SLOW_MS, { cwd: t.workspace });
      expect(after.code, after.stderr).toBe(0);
      expect(JSON.parse(after.stdout)).toMatchObject({
        scheduleId,
        exists: true,
        configured: { olderThan: '30d', keep: 1 },
        rule: { olderThan: '30d', keep: 1 },
        lastRun: { status: 'COMPLETED', result: { removed: 2, skipped: 0 } },
      });

      // Retention taken out of the config: syncing deletes the schedule, so nothing is cleaned by itself.
      fs.writeFileSync(configPath, JSON.stringify({}));
      const removed = await runCli(['clean', '--schedule', '--yes'], t.env, SLOW_MS, { cwd: t.workspace });
      expect(removed.code, removed.stderr).toBe(0);
      expect(removed.stderr).toContain(`retention schedule ${scheduleId} deleted`);
      expect(removed.stdout).toContain('no retention schedule');
      await expect(temporal.schedule.getHandle(scheduleId).describe()).rejects.toThrow(/not found/i);
    } finally {
      finisher.release();
      await temporal.schedule
        .getHandle(scheduleId)
        .delete()
        .catch(() => undefined);
      await db.close();
      await temporal.connection.close();
      await killAndWait(worker);
    }
  });
});
