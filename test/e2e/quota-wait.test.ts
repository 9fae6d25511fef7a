/**
 * Issue 18, quota-aware waiting over HTTP: a 429 `insufficient_quota` answer with a reset time puts
 * the goal in waiting_quota with the time shown, on a durable timer, and it goes on by itself when the
 * time comes; without a reset time it pauses with the reason and unpause goes on. No retry is spent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

const quotaBody = {
  error: {
    message: 'You exceeded your current quota',
    type: 'insufficient_quota',
    code: 'insufficient_quota',
  },
};
const finish = {
  toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done after the quota' } }],
};

describe('quota-aware waiting', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  const statusOf = async (t: ReturnType<typeof goalTestEnv>, id: string) =>
    JSON.parse((await runCli(['status', id, '--json'], t.env)).stdout);

  it('waits in waiting_quota until the reset time, then goes on by itself', async () => {
    const t = goalTestEnv('quota-reset', { OPENAI_API_KEY: 'sk-test' });
    const before = server.requests.length;
    server.enqueue({ status: 429, headers: { 'Retry-After': '8' }, body: quotaBody }, finish);
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId: id } = await startGoal(t, server, 'wait for quota');
      const waiting = await waitFor(
        'waiting_quota',
        async () => {
          const view = await statusOf(t, id);
          return view.status === 'waiting_quota' ? view : undefined;
        },
        60_000,
        200,
      );
      expect(waiting.reason).toMatch(/^provider quota exhausted until 20\d\d-\d\d-\d\dT[0-9:.]+Z \(.*429/);
      expect(server.requests.length - before).toBe(1);
      const done = await runCli(['watch', id, '--json'], t.env, 120_000);
      expect(done.code, done.stderr).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed', steps: 1 });
      // One refused request and one answered: no retry was spent in between, and it waited the reset out.
      const requests = server.requests.slice(before);
      expect(requests).toHaveLength(2);
      expect(requests[1].time - requests[0].time).toBeGreaterThanOrEqual(8_000);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });

  it('pauses with the reason when no reset time is given, and unpause goes on', async () => {
    const t = goalTestEnv('quota-unknown', { OPENAI_API_KEY: 'sk-test' });
    const before = server.requests.length;
    server.enqueue({ status: 429, body: quotaBody });
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId: id } = await startGoal(t, server, 'wait for quota');
      const paused = await waitFor(
        'the quota pause',
        async () => {
          const view = await statusOf(t, id);
          return view.status === 'paused' ? view : undefined;
        },
        60_000,
        200,
      );
      expect(paused.reason).toMatch(/^provider quota exhausted and no reset time given \(.*429/);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(server.requests.length - before).toBe(1);
      server.enqueue(finish);
      const unpaused = await runCli(['unpause', id], t.env);
      expect(unpaused.code, unpaused.stderr).toBe(0);
      const done = await runCli(['watch', id, '--json'], t.env, 120_000);
      expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed', steps: 1 });
      expect(server.requests.length - before).toBe(2);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
