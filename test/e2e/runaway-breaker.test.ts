/**
 * Issue 18, the runaway breaker end to end over HTTP: a model stuck calling `ls -1` (same call, same
 * output) is paused after five, with the rule and its evidence as the reason; it makes no model call
 * while paused (the server's request count does not move); on unpause the model is told why, and goes on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

const stuck = { toolCalls: [{ name: 'bash', args: { command: 'ls -1' } }] };

describe('the runaway breaker', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('pauses a model stuck in an identical loop, calls nothing while paused, and tells it why on unpause', async () => {
    const t = goalTestEnv('breaker', { OPENAI_API_KEY: 'sk-test' });
    fs.writeFileSync(path.join(t.workspace, 'a.txt'), 'a\n');
    const before = server.requests.length;
    // Whatever it is asked, the model calls `ls -1` again.
    server.setFallback(() => stuck);
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, 'list the files');
      const paused = await waitFor(
        'the breaker to pause the goal',
        async () => {
          const view = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
          return view.status === 'paused' ? view : undefined;
        },
        120_000,
        300,
      );
      expect(paused.reason).toBe(
        'runaway breaker: the same bash call `ls -1` returned the same output 5 times in a row',
      );
      expect(paused.steps).toBe(5);
      expect(server.requests.length - before).toBe(5);
      // Paused means no model call: the count stays while we wait.
      const from = Date.now();
      while (Date.now() - from < 5_000) {
        const view = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
        expect(view.status).toBe('paused');
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(server.requests.length - before).toBe(5);

      server.setFallback(undefined);
      server.enqueue({ toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'listed' } }] });
      const unpaused = await runCli(['unpause', sessionId], t.env);
      expect(unpaused.code, unpaused.stderr).toBe(0);
      const done = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(done.code, done.stderr).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed', steps: 6 });
      expect(server.requests.length - before).toBe(6);
      // The sixth request carries the one-line note on why the goal was paused.
      const sixth = JSON.stringify(server.requests[before + 5].body);
      expect(sixth).toContain('you were paused by the runaway breaker (the same bash call `ls -1`');
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
