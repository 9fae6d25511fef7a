/**
 * The runaway breaker end to end over HTTP (issues 18, 26.2): a model stuck calling `ls -1` (same call,
 * same output) gets a warning notice at the fifth repeat and is paused after three more, with the rule
 * and its evidence as the reason; it makes no model call while paused (the server's request count does
 * not move); `status` prints the command that moves it on; a steering message lets it go on, and the
 * model is told why it was stopped. A goal a person paused stays paused at a steering message, and
 * `steer` says how to let it go on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { startGoal, statusOf, waitForSteps } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

const stuck = { toolCalls: [{ name: 'bash', args: { command: 'ls -1' } }] };
const finish = { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'listed' } }] };

describe('the runaway breaker', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('warns a model stuck in an identical loop, pauses it three repeats later, and a steering message lets it go on', async () => {
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
          const view = await statusOf(t, sessionId);
          return view.status === 'paused' ? view : undefined;
        },
        120_000,
        300,
      );
      expect(paused.reason).toBe(
        'runaway breaker: the same bash call `ls -1` returned the same output 8 times in a row, after a warning at 5',
      );
      expect(paused.steps).toBe(8);
      expect(server.requests.length - before).toBe(8);
      // The warning reached the model after the fifth repeat (in the sixth request), and not before.
      const fifth = JSON.stringify(server.requests[before + 4].body);
      const sixth = JSON.stringify(server.requests[before + 5].body);
      expect(fifth).not.toContain('runaway breaker:');
      expect(sixth).toContain(
        'runaway breaker: the same bash call `ls -1` returned the same result 5 times in a row',
      );
      expect(sixth).toContain('call finish with status \\"blocked\\"');
      expect(sixth).toContain('job-output');
      // Paused means no model call: the count stays while we wait.
      const from = Date.now();
      while (Date.now() - from < 3_000) {
        expect((await statusOf(t, sessionId)).status).toBe('paused');
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(server.requests.length - before).toBe(8);
      // `status` says how it goes on.
      const status = await runCli(['status', sessionId], t.env);
      expect(status.stdout).toContain(
        `go on      goalrun unpause ${sessionId} (or goalrun steer ${sessionId}`,
      );

      server.setFallback(undefined);
      server.enqueue(finish);
      const steered = await runCli(['steer', sessionId, 'stop listing; finish'], t.env);
      expect(steered.code, steered.stderr).toBe(0);
      expect(steered.stdout).toContain('the goal was paused by the runaway breaker and goes on now');
      const done = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(done.code, done.stderr).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed', steps: 9 });
      expect(server.requests.length - before).toBe(9);
      // The ninth request carries the steering and the one-line note on why the goal was paused.
      const ninth = JSON.stringify(server.requests[before + 8].body);
      expect(ninth).toContain('stop listing; finish');
      expect(ninth).toContain('you were paused by the runaway breaker (the same bash call `ls -1`');
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  });

  it('leaves a goal a person paused paused at a steering message, and says how to let it go on', async () => {
    const t = goalTestEnv('breaker-user-pause', { OPENAI_API_KEY: 'sk-test' });
    let release = false;
    // Each tick prints something new: honest work the breaker leaves alone.
    let tick = 0;
    server.setFallback((body) =>
      release && (body.tools?.length ?? 0) > 0
        ? finish
        : { toolCalls: [{ name: 'bash', args: { command: `sleep 0.2; echo tick ${++tick}` } }] },
    );
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, server, 'tick');
      await waitForSteps(t, sessionId, 1);
      expectJson(await runCli(['pause', sessionId, '--json'], t.env));
      const paused = await waitFor('paused', async () => {
        const view = await statusOf(t, sessionId);
        return view.status === 'paused' ? view : undefined;
      });
      expect(paused.reason).toBe('paused by request');
      const steered = await runCli(['steer', sessionId, 'keep ticking'], t.env);
      expect(steered.code, steered.stderr).toBe(0);
      expect(steered.stdout).toContain('but the goal is paused (paused by request)');
      expect(steered.stdout).toContain(`goalrun unpause ${sessionId}`);
      expect(await statusOf(t, sessionId)).toMatchObject({ status: 'paused', steps: paused.steps });
      const status = await runCli(['status', sessionId], t.env);
      expect(status.stdout).toContain(`go on      goalrun unpause ${sessionId}\n`);

      release = true;
      expectJson(await runCli(['unpause', sessionId, '--json'], t.env));
      const final = expectJson(await runCli(['watch', sessionId, '--json'], t.env, 120_000));
      expect(final.status).toBe('completed');
    } finally {
      server.setFallback(undefined);
      await killAndWait(worker, 'SIGTERM');
    }
  });
  it('starts afresh on resume: the old count and trip reason do not carry over', async () => {
    const t = goalTestEnv('breaker-resume', { OPENAI_API_KEY: 'sk-test' });
    fs.writeFileSync(path.join(t.workspace, 'a.txt'), 'a\n');
    server.setFallback(() => stuck);
    const worker = spawnCli(['worker'], t.env);
    let resumed: ReturnType<typeof spawnCli> | undefined;
    try {
      const { sessionId } = await startGoal(t, server, 'list the files');
      await waitFor(
        'the breaker to pause the goal',
        async () => (await statusOf(t, sessionId)).status === 'paused',
      );
      expect((await runCli(['cancel', sessionId], t.env)).code).toBe(0);
      await waitFor('cancelled', async () => (await statusOf(t, sessionId)).status === 'cancelled');

      // After the resume: four more of the same call (a carried count would pause at once), then honest ticks.
      const from = server.requests.length;
      let tick = 0;
      let release = false;
      server.setFallback((body) => {
        if (server.requests.length - from <= 4) return stuck;
        if (release && (body.tools?.length ?? 0) > 0) return finish;
        return { toolCalls: [{ name: 'bash', args: { command: `sleep 0.2; echo tick ${++tick}` } }] };
      });
      resumed = spawnCli(['resume', sessionId, '--no-worker'], t.env);
      await waitForSteps(t, sessionId, 8 + 6);
      expect((await statusOf(t, sessionId)).status).toBe('running');
      expectJson(await runCli(['pause', sessionId, '--json'], t.env));
      const paused = await waitFor('paused', async () => {
        const view = await statusOf(t, sessionId);
        return view.status === 'paused' ? view : undefined;
      });
      // A pause by a person is reported as one, not as the breaker's old trip.
      expect(paused.reason).toBe('paused by request');

      release = true;
      expectJson(await runCli(['unpause', sessionId, '--json'], t.env));
      const final = expectJson(await runCli(['watch', sessionId, '--json'], t.env, 120_000));
      expect(final.status).toBe('completed');
    } finally {
      server.setFallback(undefined);
      if (resumed) await killAndWait(resumed, 'SIGTERM');
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
