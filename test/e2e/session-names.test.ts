/**
 * Issue 17 (F-SESSION, F-CMDS) through the built CLI: `start --name` gets or creates the project's
 * session (two racing starts make one, the loser is told it runs), a stopped named session continues
 * with the new objective, `resume NAME` is get-only with the nearest names, `resume` without an id and
 * without a terminal lists the sessions, `rename` keeps names unique, `sessions` lists them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shortIdOf } from '../../core/session-ids';
import { killAndWait, runCli, runCliIn, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { type HoldingFinishServer, startHoldingFinishServer } from '../support/goal-steps';
import type { OpenAITestServer } from '../support/openai-test-server';

const MODEL = 'openai-compatible:test-model';

describe('session names', () => {
  let finisher: HoldingFinishServer;
  let server: OpenAITestServer;
  beforeAll(async () => {
    finisher = await startHoldingFinishServer();
    server = finisher.server;
  });
  afterAll(async () => server?.close());

  it('gets or creates by name, one session under a race, get-only resume, unique rename', async () => {
    const t = goalTestEnv('names');
    const worker = spawnCli(['worker'], t.env);
    const store = await testStore(t.databaseUrl);
    const start = (objective: string, extra: string[] = []) =>
      runCliIn(
        t.workspace,
        [
          'start',
          objective,
          '--name',
          'alpha',
          '--model',
          MODEL,
          '--base-url',
          server.url,
          '--json',
          ...extra,
        ],
        t.env,
      );
    const statusOf = async (id: string) => JSON.parse((await runCli(['status', id, '--json'], t.env)).stdout);
    try {
      finisher.hold();
      const [a, b] = await Promise.all([start('first objective'), start('first objective')]);
      const winner = [a, b].find((each) => each.code === 0);
      const loser = [a, b].find((each) => each.code !== 0);
      expect(winner, `${a.stderr}\n${b.stderr}`).toBeDefined();
      expect(loser?.code, loser?.stderr).toBe(2);
      const sessionId = JSON.parse(winner?.stdout ?? '{}').sessionId as string;
      expect(loser?.stderr).toContain(
        `session alpha is running (goal ${sessionId}); steer it, or cancel it first`,
      );
      // The suite's store is shared: another file's project may also name a session alpha.
      const project = (await store.getSession(sessionId))?.projectHash;
      const named = (await store.listProjectSessions(null, 1000)).filter(
        (row) => row.name === 'alpha' && row.projectHash === project,
      );
      expect(named.map((row) => row.id)).toEqual([sessionId]);

      // While it runs, a third start is refused the same way.
      const third = await start('again');
      expect(third.code).toBe(2);
      expect(third.stderr).toContain('session alpha is running');

      // rename of another session to the taken name is refused.
      const other = await runCliIn(
        t.workspace,
        ['start', 'another goal', '--model', MODEL, '--base-url', server.url, '--json'],
        t.env,
      );
      expect(other.code, other.stderr).toBe(0);
      const otherId = JSON.parse(other.stdout).sessionId as string;
      const rename = await runCli(['rename', otherId, 'alpha'], t.env);
      expect(rename.code).toBe(2);
      expect(rename.stderr).toContain(`the name "alpha" is taken by session ${sessionId}`);

      finisher.release();
      await waitFor(
        'both goals to complete',
        async () =>
          (await statusOf(sessionId)).status === 'completed' &&
          (await statusOf(otherId)).status === 'completed',
      );

      // sessions lists both, newest activity first, with the name.
      const listed = await runCliIn(t.workspace, ['sessions', '--json'], t.env);
      expect(listed.code, listed.stderr).toBe(0);
      const rows = JSON.parse(listed.stdout) as Array<{
        name: string | null;
        sessionId: string;
        status: string;
        steps: number;
      }>;
      expect(rows.map((row) => row.sessionId).sort()).toEqual([sessionId, otherId].sort());
      expect(rows.find((row) => row.sessionId === sessionId)).toMatchObject({
        name: 'alpha',
        status: 'completed',
        steps: 1,
      });
      const text = await runCliIn(t.workspace, ['sessions'], t.env);
      expect(text.stdout).toMatch(/alpha\s+\S+\s+completed\s+1 steps/);

      // Stopped: a start with the name continues it, the new objective as an instruction.
      const before = server.requests.length;
      const again = await start('second objective');
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout).sessionId).toBe(sessionId);
      await waitFor('the continued goal to complete', async () => {
        const view = await statusOf(sessionId);
        return view.status === 'completed' && view.steps === 2;
      });
      expect(JSON.stringify(server.requests.slice(before).map((r) => r.body))).toContain('second objective');

      // resume NAME is get-only: a missing name is exit 2 with the nearest names.
      const missing = await runCliIn(t.workspace, ['resume', 'alpah', '--no-worker'], t.env);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('no session named "alpah"');
      expect(missing.stderr).toContain('nearest names: alpha');
      const resumed = await runCliIn(t.workspace, ['resume', 'alpha', '--message', 'third', '--json'], t.env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ sessionId, status: 'completed', steps: 3 });

      // resume without an id and without a terminal lists the project's sessions.
      const bare = await runCliIn(t.workspace, ['resume'], t.env);
      expect(bare.code).toBe(2);
      expect(bare.stderr).toContain('no terminal to pick one on');
      expect(bare.stderr).toContain('alpha');
      // Each by its short id, as list and sessions show it (issue 26 §10).
      expect(bare.stderr).toMatch(new RegExp(`^ {2}\\d\\. ${shortIdOf(otherId)}  completed`, 'm'));

      // Another project's session: by prefix refused, by full id resumed with a note.
      const elsewhere = await runCli(['resume', sessionId.slice(0, -1), '--no-worker'], t.env);
      expect(elsewhere.code).toBe(2);
      expect(elsewhere.stderr).toContain(`is session ${sessionId} of another project`);
      const byFullId = await runCli(['resume', sessionId, '--message', 'fourth', '--json'], t.env);
      expect(byFullId.code, byFullId.stderr).toBe(0);
      expect(byFullId.stderr).toContain(`note: session ${sessionId} belongs to another project`);
      expect(JSON.parse(byFullId.stdout)).toMatchObject({ sessionId, status: 'completed', steps: 4 });
      // No lock row is left behind.
      expect(await store.tryLockSession(sessionId, 'check', 'test', 1000)).toEqual({ acquired: true });
    } finally {
      finisher.release();
      await store.close();
      await killAndWait(worker);
    }
  });
});
