/**
 * Issue 16 §3: ids that work. Two goals of one directory share the first 25 characters of their
 * session ids; before, only a long prefix told them apart, a name could not be used as an id, `list`
 * showed neither names nor short ids, a too-short prefix said "no goal" and `steer --last` was an
 * unknown option. Each assertion below fails on that code.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { startGoal, statusOf } from '../support/goal-steps';
import {
  type OpenAITestServer,
  promptText,
  requestStep,
  startOpenAITestServer,
} from '../support/openai-test-server';

describe('goal ids', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('short ids, names, the minimum prefix and steer --last', async () => {
    const t = goalTestEnv('goal-ids');
    const objective = `goal-ids-${randomUUID().slice(0, 8)}`;
    server.setFallback((body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      return { toolCalls: [{ name: 'bash', args: { command: `echo step ${requestStep(body)}` } }] };
    });
    const start = async (which: string) =>
      (await startGoal(t, server, `${objective} ${which}`, ['--max-steps', '2'])).sessionId;
    const worker = spawnCli(['worker'], t.env);
    try {
      const first = await start('one');
      const second = await start('two');
      for (const sessionId of [first, second]) {
        await waitFor(
          `${sessionId} to wait at its limit`,
          async () => (await statusOf(t, sessionId)).status === 'limit_reached',
          240_000,
          500,
        );
      }
      // One directory: the ids share the hash and most of the timestamp.
      expect(first.slice(0, 20)).toBe(second.slice(0, 20));

      const listed = expectJson(await runCli(['list', '--json'], t.env)) as Array<Record<string, any>>;
      const shortOf = (id: string) => listed.find((view) => view.sessionId === id)?.shortId as string;
      // Issue 26 §10: the short id is the end of the timestamp, not the directory's shared head.
      expect(shortOf(first)).toMatch(/^\d{8,}$/);
      expect(first.replace(/\D/g, '').endsWith(shortOf(first))).toBe(true);
      expect(shortOf(first)).not.toBe(shortOf(second));
      for (const id of [first, second]) {
        const viaShort = expectJson(await runCli(['status', shortOf(id), '--json'], t.env));
        expect(viaShort.sessionId).toBe(id);
        expect(viaShort.shortId).toBe(shortOf(id));
        // status, sessions and list print the same short id.
        const statusText = await runCli(['status', shortOf(id)], t.env);
        expect(statusText.stdout).toMatch(new RegExp(`^id {9}${shortOf(id)}$`, 'm'));
      }
      const sessions = await runCli(['sessions'], t.env, 60_000, { cwd: t.workspace });
      for (const id of [first, second]) expect(sessions.stdout).toMatch(new RegExp(`^${shortOf(id)}  `, 'm'));
      const sessionsJson = expectJson(
        await runCli(['sessions', '--json'], t.env, 60_000, { cwd: t.workspace }),
      ) as Array<Record<string, any>>;
      expect(sessionsJson.map((row) => row.shortId).sort()).toEqual([shortOf(first), shortOf(second)].sort());

      const renamed = await runCli(['rename', shortOf(second), 'the-second-goal'], t.env, 120_000);
      expect(renamed.code, renamed.stderr).toBe(0);
      await waitFor(
        'the name to reach the store',
        async () =>
          expectJson(await runCli(['status', 'the-second-goal', '--json'], t.env)).sessionId === second,
        60_000,
        500,
      );
      const text = await runCli(['list'], t.env);
      expect(text.stdout).toMatch(new RegExp(`^${shortOf(second)}  .*\\[the-second-goal\\]`, 'm'));
      expect(text.stdout).not.toContain(second);

      const short = await runCli(['status', first.slice(0, 3)], t.env);
      expect(short.code).toBe(2);
      expect(short.stderr).toContain('give at least 4 characters');

      const ambiguous = await runCli(['status', first.slice(0, 20)], t.env);
      expect(ambiguous.code).toBe(2);
      expect(ambiguous.stderr).toContain('ambiguous');

      // --last: the newest goal of the current directory (the second one).
      const steered = await runCli(['steer', '--last', '/limits', 'max_steps=3', '--json'], t.env, 120_000, {
        cwd: t.workspace,
      });
      expect(steered.stdout, steered.stderr).toContain(second);
      expect(JSON.parse(steered.stdout).sessionId).toBe(second);

      for (const id of [first, second]) await runCli(['cancel', id, '--wait'], t.env, 120_000);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 600_000);
});
