/**
 * Issue 17 (retention) through the built CLI: `clean` is a dry run unless --yes, and --yes removes
 * exactly what the dry run listed; a running session is never listed; the newest N stopped sessions
 * and named ones are kept; every row of a cleaned session is gone, per table; its workflow executions
 * are gone from Temporal; `status` says it was cleaned.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIdOf } from '../../core/workflow-names';
import { CLEANED_TABLES } from '../../store/session-clean';
import { createPgClient } from '../../store/sql';
import { expectJson, killAndWait, runCli, runCliIn, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import {
  type HoldingFinishServer,
  startHoldingFinishServer,
  waitForExecutionDeleted,
} from '../support/goal-steps';
import type { OpenAITestServer } from '../support/openai-test-server';

const MODEL = 'openai-compatible:test-model';

describe('clean', () => {
  let finisher: HoldingFinishServer;
  let server: OpenAITestServer;
  beforeAll(async () => {
    finisher = await startHoldingFinishServer((body) => JSON.stringify(body).includes('keep running'));
    server = finisher.server;
  });
  afterAll(async () => server?.close());

  it('removes exactly what the dry run listed, never a running session, keeping the newest and named', async () => {
    const t = goalTestEnv('clean');
    const run = async (objective: string, extra: string[] = []) => {
      const result = await runCliIn(
        t.workspace,
        ['run', objective, '--model', MODEL, '--base-url', server.url, '--json', ...extra],
        t.env,
      );
      return expectJson(result).sessionId as string;
    };
    const stopped = [
      await run('one'),
      await run('two'),
      await run('three', ['--name', 'kept by name']),
      await run('four'),
      await run('five'),
    ];
    finisher.hold();
    const worker = spawnCli(['worker'], t.env);
    const db = createPgClient(t.databaseUrl);
    const temporal = new Client({ connection: await Connection.connect({ address: t.temporalAddress }) });
    try {
      const started = await runCliIn(
        t.workspace,
        ['start', 'keep running', '--model', MODEL, '--base-url', server.url, '--json'],
        t.env,
      );
      expect(started.code, started.stderr).toBe(0);
      const runningId = JSON.parse(started.stdout).sessionId as string;
      await waitFor('the held goal to call the model', () =>
        server.requests.some((r) => JSON.stringify(r.body).includes('keep running')),
      );

      const dry = await runCliIn(t.workspace, ['clean', '--keep', '2', '--json'], t.env);
      expect(dry.code, dry.stderr).toBe(0);
      const listed = JSON.parse(dry.stdout) as { dryRun: boolean; sessions: Array<{ sessionId: string }> };
      expect(listed.dryRun).toBe(true);
      const listedIds = listed.sessions.map((s) => s.sessionId).sort();
      // four and five are the newest two; three is named; the running one is never listed.
      expect(listedIds).toEqual([stopped[0], stopped[1]].sort());
      const text = await runCliIn(t.workspace, ['clean', '--keep', '2'], t.env);
      expect(text.stdout).toContain('would remove 2 sessions (a dry run');
      // The dry run kept everything.
      const kept = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM messages WHERE session_id = $1',
        [stopped[0]],
      );
      expect(kept.rows[0].n).toBeGreaterThan(0);

      const yes = await runCliIn(t.workspace, ['clean', '--keep', '2', '--yes', '--json'], t.env);
      expect(yes.code, yes.stderr).toBe(0);
      const removed = JSON.parse(yes.stdout) as { dryRun: boolean; sessions: Array<{ sessionId: string }> };
      expect(removed.dryRun).toBe(false);
      expect(removed.sessions.map((s) => s.sessionId).sort()).toEqual(listedIds);

      for (const id of listedIds) {
        for (const table of CLEANED_TABLES) {
          const { rows } = await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM ${table} WHERE session_id = $1`,
            [id],
          );
          expect(rows[0].n, `${table} of ${id}`).toBe(0);
        }
        const status = await runCli(['status', id, '--json'], t.env);
        expect(status.code, status.stderr).toBe(0);
        expect(JSON.parse(status.stdout)).toMatchObject({ sessionId: id, status: 'cleaned' });
        // Temporal deletes an execution in the background after DeleteWorkflowExecution returns.
        await waitForExecutionDeleted(temporal, id);
      }
      for (const id of [...stopped.slice(2), runningId]) {
        const { rows } = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM messages WHERE session_id = $1',
          [id],
        );
        expect(rows[0].n, id).toBeGreaterThan(0);
      }
      expect((await temporal.workflow.getHandle(workflowIdOf(runningId)).describe()).status.name).toBe(
        'RUNNING',
      );
      // Even with --keep 0 and named ones included, the running session is never listed.
      const everything = await runCliIn(
        t.workspace,
        ['clean', '--keep', '0', '--include-named', '--json'],
        t.env,
      );
      const all = (JSON.parse(everything.stdout) as { sessions: Array<{ sessionId: string }> }).sessions.map(
        (s) => s.sessionId,
      );
      expect(all.sort()).toEqual(stopped.slice(2).sort());
    } finally {
      finisher.release();
      await db.close();
      await temporal.connection.close();
      await killAndWait(worker);
    }
  });
});
