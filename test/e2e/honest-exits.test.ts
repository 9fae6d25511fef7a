/**
 * Issue 16 §4: what the CLI says is true. Each test fails on the code of before:
 * - `compact` of a goal whose summarizer fails exits 1 (it exited 0), its note says "compaction" (it
 *   said "auto-compact failed" though run by hand), and the failed request shows in `stats` (0 before);
 * - `approve` of a goal that waits for no approval fails at once with exit 2, saying what the goal is
 *   doing (it waited 30 s);
 * - `watch` of a goal ended by /clear exits 0 and names the new session (it exited 1);
 * - the note of a model call retried after its worker died names the heartbeat timeout ("unknown error").
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { startGoal, statusOf, waitForSteps } from '../support/goal-steps';
import {
  isSummaryRequest,
  type OpenAITestServer,
  openAIErrorResponse,
  promptText,
  requestStep,
  startOpenAITestServer,
} from '../support/openai-test-server';

describe('honest exit codes and counts', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('a failed compact exits 1, says "compaction", counts its request; approve of a busy goal exits 2 at once', async () => {
    const t = goalTestEnv('honest-compact');
    const objective = `honest-compact-${randomUUID().slice(0, 8)}`;
    let summaries = 0;
    server.setFallback((body) => {
      if (isSummaryRequest(body)) {
        summaries += 1;
        return openAIErrorResponse(400, 'summarizer says no');
      }
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      const n = requestStep(body);
      return { toolCalls: [{ name: 'bash', args: { command: `seq 1 60 | sed 's/^/step ${n} line /'` } }] };
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, objective, ['--max-steps', '7']);
      await waitFor(
        'the goal to wait at its limit',
        async () => (await statusOf(t, sessionId)).status === 'limit_reached',
        240_000,
        500,
      );

      const approve = await runCli(['approve', sessionId], t.env, 120_000);
      expect(approve.code, approve.stderr).toBe(2);
      expect(approve.stderr).toMatch(/not waiting for approval: it is limit_reached \(step 7/);
      expect(approve.ms).toBeLessThan(25_000);

      const compacted = await runCli(['compact', sessionId, '--json'], t.env, 180_000);
      expect(compacted.code, `${compacted.stdout}\n${compacted.stderr}`).toBe(1);
      const result = JSON.parse(compacted.stdout);
      expect(result.stage).toBe('failed');
      expect(result.note).toMatch(/^compaction failed \(.*summarizer says no/);
      expect(result.note).not.toContain('auto-compact failed');
      expect(summaries).toBeGreaterThan(0);

      expect((await runCli(['cancel', sessionId, '--wait'], t.env, 180_000)).code).toBe(0);
      const stats = expectJson(await runCli(['stats', sessionId, '--json'], t.env));
      expect(stats.summarizer.requests).toBeGreaterThan(0);
      const rows = Object.values(stats.breakdown) as Array<{ requests: number; summarizerRequests: number }>;
      expect(rows.reduce((sum, row) => sum + row.summarizerRequests, 0)).toBeGreaterThan(0);
      // The total and the per-model rows add up.
      expect(rows.reduce((sum, row) => sum + row.requests, 0)).toBe(stats.usage.requests);
      const text = await runCli(['stats', sessionId], t.env);
      expect(text.stdout).toMatch(/summarizer requests: [1-9]/);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 600_000);

  it('watch of a cleared goal exits 0 and names the new session', async () => {
    const t = goalTestEnv('honest-clear');
    const objective = `honest-clear-${randomUUID().slice(0, 8)}`;
    let cleared = false;
    server.setFallback((body) => {
      if (isSummaryRequest(body) || !promptText(body).includes(objective)) return { text: 'not mine' };
      if (!cleared || requestStep(body) === 1) {
        return {
          toolCalls: [{ name: 'bash', args: { command: `sleep 1; echo working ${requestStep(body)}` } }],
        };
      }
      return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'fresh session done' } }] };
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, objective);
      await waitForSteps(t, sessionId, 1, 180_000, 500);
      expect((await runCli(['steer', sessionId, '/clear'], t.env, 120_000)).code).toBe(0);
      cleared = true;
      const watched = await runCli(['watch', sessionId], t.env, 240_000);
      expect(watched.code, `${watched.stdout}\n${watched.stderr}`).toBe(0);
      const next = /goes on in session (\S+): goalrun watch \1/.exec(watched.stdout)?.[1];
      expect(next, watched.stdout).toBeDefined();
      expect(next).not.toBe(sessionId);
      const fresh = await runCli(['watch', next as string, '--json'], t.env, 240_000);
      expect(JSON.parse(fresh.stdout).status).toBe('completed');
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 600_000);

  it('a model call retried after its worker died says heartbeat timeout, not "unknown error"', async () => {
    const t = goalTestEnv('honest-retry');
    const objective = `honest-retry-${randomUUID().slice(0, 8)}`;
    let firstCalls = 0;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    server.setFallback(async (body) => {
      if (isSummaryRequest(body) || !promptText(body).includes(objective)) return { text: 'not mine' };
      if (requestStep(body) === 1) {
        firstCalls += 1;
        // The first attempt never answers while its worker lives; the worker is killed meanwhile.
        if (firstCalls === 1) await held;
        return { toolCalls: [{ name: 'bash', args: { command: 'echo one' } }] };
      }
      return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done after retry' } }] };
    });
    const first = spawnCli(['worker'], t.env);
    let second: ReturnType<typeof spawnCli> | null = null;
    try {
      const { sessionId } = await startGoal(t, server, objective);
      await waitFor('the first model call', () => firstCalls >= 1, 180_000, 200);
      await killAndWait(first, 'SIGKILL');
      release();
      second = spawnCli(['worker'], t.env);
      const done = expectJson(await runCli(['watch', sessionId, '--json'], t.env, 300_000));
      expect(done.status).toBe('completed');
      const recent = JSON.stringify((await statusOf(t, sessionId)).recent);
      expect(recent).toMatch(/succeeded on attempt 2 after: heartbeat timeout/);
      expect(recent).not.toContain('unknown error');
    } finally {
      release();
      await killAndWait(first, 'SIGKILL');
      if (second) await killAndWait(second, 'SIGTERM');
    }
  }, 600_000);
});
