/**
 * Issue 15 §1: one command queue. Every test here fails on the handlers of before the queue:
 * - app commands sent by signal while no worker runs, valid and invalid: the goal honours the valid
 *   ones, reports the invalid ones and goes on (before, a bad /model wedged it for good);
 * - /pause stops a model call in flight and no model call is made while paused (before, the pause
 *   waited for the call to finish);
 * - a /auto-compact change made while a compaction's summarizer runs is kept (before, the compaction
 *   wrote its old snapshot back over it);
 * - /compact of a goal waiting at a limit is carried out (before, it hung in the queue).
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { steerSignal } from '../../workflows/definitions';
import { type CliResult, expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { compactionModel } from '../support/compaction-model';
import { goalTestEnv, testStore } from '../support/goal-env';
import { gate, requestsOf, startGoal, statusOf } from '../support/goal-steps';
import {
  isSummaryRequest,
  type OpenAITestServer,
  promptText,
  requestStep,
  startOpenAITestServer,
} from '../support/openai-test-server';

const MODEL = 'openai-compatible:test-model';

describe('the command queue', () => {
  let server: OpenAITestServer;
  let client: Client;
  beforeAll(async () => {
    server = await startOpenAITestServer();
    client = new Client({
      connection: await Connection.connect({ address: goalTestEnv('cq-probe').temporalAddress }),
    });
  });
  afterAll(async () => {
    await server?.close();
    await client?.connection.close();
  });

  it('honours commands signalled while no worker runs, reports the bad ones, and goes on', async () => {
    const t = goalTestEnv('cq-signals');
    const objective = `queue-signals-${randomUUID().slice(0, 8)}`;
    server.setFallback((body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      return requestStep(body) === 1
        ? { toolCalls: [{ name: 'bash', args: { command: 'echo one' } }] }
        : { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done after signals' } }] };
    });
    const started = await startGoal(t, server, objective);
    const sessionId = started.sessionId as string;
    const handle = client.workflow.getHandle(started.workflowId as string);
    const send = (text: string) =>
      handle.signal(steerSignal, { id: randomUUID(), text, from: 'tester@queue' });
    // In this order: the bad ones among good ones, a command that fails when carried out (no
    // OPENAI_API_KEY on the worker), steering text, and a pause last.
    await send('/model opnai:gpt-4o');
    await send('/paws');
    await send('/limits max_steps=zero');
    await send('/rename queue-signals');
    await send('/limits max_steps=40');
    await send('/model openai:gpt-4o');
    await send('Write STEERED-BY-SIGNAL into your notes.');
    await send('/pause');

    const worker = spawnCli(['worker'], t.env);
    const store = await testStore(t.databaseUrl);
    try {
      await waitFor(
        'the goal to pause',
        async () => (await statusOf(t, sessionId)).status === 'paused',
        180_000,
        500,
      );
      const paused = await statusOf(t, sessionId);
      expect(paused.name).toBe('queue-signals');
      expect(paused.limits.maxSteps).toBe(40);
      const recent = (paused.recent as Array<{ text: string }>).map((action) => action.text).join('\n');
      expect(recent).toMatch(/\/model from tester@queue ignored: invalid model "opnai:gpt-4o"/);
      expect(recent).toMatch(/\/paws from tester@queue ignored: unknown command/);
      expect(recent).toMatch(/\/limits from tester@queue ignored: max_steps must be a positive whole number/);
      expect(recent).toMatch(/\/model from tester@queue failed: .*OPENAI_API_KEY/);
      expect(paused.model).toBe(MODEL);
      // Paused before its first step: no model call at all.
      expect(requestsOf(server, objective)).toHaveLength(0);

      expect((await runCli(['unpause', sessionId], t.env)).code).toBe(0);
      const done = expectJson(await runCli(['watch', sessionId, '--json'], t.env, 240_000));
      expect(done.status).toBe('completed');
      const requests = requestsOf(server, objective);
      expect(requests.length).toBeGreaterThanOrEqual(2);
      expect(promptText(requests[0].body)).toContain('STEERED-BY-SIGNAL');
      // The model is told what was refused (notices), but never gets a command as a message to act on.
      for (const request of requests) {
        for (const message of request.body.messages ?? []) {
          if (message.role === 'user')
            expect(JSON.stringify(message.content)).not.toMatch(/^"(\[steering from [^\]]*\] )?\//);
        }
      }
      // Each bad request left a notice in the transcript (and so in the stream).
      const notices = (await store.listMessages(sessionId))
        .filter((message) => message.key.startsWith('notice:'))
        .map((message) => JSON.stringify(message.message));
      expect(notices.some((text) => text.includes('opnai:gpt-4o'))).toBe(true);
      expect(notices.some((text) => text.includes('/paws'))).toBe(true);
      expect(notices.some((text) => text.includes('OPENAI_API_KEY'))).toBe(true);
    } finally {
      await store.close();
      await killAndWait(worker, 'SIGTERM');
    }
  }, 420_000);

  it('stops a running model call on /pause, calls no model while paused, and runs the step again on unpause', async () => {
    const t = goalTestEnv('cq-pause');
    const objective = `queue-pause-${randomUUID().slice(0, 8)}`;
    const held = gate();
    let heldOnce = false;
    server.setFallback(async (body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      const step = requestStep(body);
      if (step === 1) return { toolCalls: [{ name: 'bash', args: { command: 'echo one' } }] };
      if (step === 2 && !heldOnce) {
        heldOnce = true;
        // Never answered: only a pause that stops the call lets the goal pause.
        await held.opened;
        return { text: 'too late' };
      }
      return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'paused and went on' } }] };
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const started = await startGoal(t, server, objective);
      const sessionId = started.sessionId as string;
      await waitFor('the held model call', () => heldOnce, 120_000, 200);
      expect((await runCli(['pause', sessionId], t.env)).code).toBe(0);
      await waitFor(
        'the goal to pause',
        async () => (await statusOf(t, sessionId)).status === 'paused',
        120_000,
        500,
      );
      const whilePaused = requestsOf(server, objective).length;
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      expect(requestsOf(server, objective)).toHaveLength(whilePaused);
      const status = await statusOf(t, sessionId);
      expect(status.steps).toBe(1);

      expect((await runCli(['unpause', sessionId], t.env)).code).toBe(0);
      const done = expectJson(await runCli(['watch', sessionId, '--json'], t.env, 240_000));
      expect(done).toMatchObject({ status: 'completed', steps: 2 });
      const stepTwo = requestsOf(server, objective).filter((request) => requestStep(request.body) === 2);
      expect(stepTwo).toHaveLength(2);
    } finally {
      held.open();
      await killAndWait(worker, 'SIGTERM');
    }
  }, 420_000);

  it('keeps an auto-compact switch made while a summarizer call runs', async () => {
    const t = goalTestEnv('cq-merge');
    const objective = `queue-merge-${randomUUID().slice(0, 8)}`;
    let sessionId = '';
    let switched: CliResult | null = null;
    const model = compactionModel({
      main: (n) =>
        n >= 30
          ? { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'merged' } }] }
          : {
              toolCalls: [
                {
                  name: 'bash',
                  args: { command: `seq 1 45 | sed 's/^/FACT-${n}: step ${n} output line number /'` },
                },
              ],
            },
    });
    // Summarizer requests do not carry the objective (the first message is kept, not summarized): this
    // fallback answers every request, and the tests of this file run one after another.
    server.setFallback(async (body) => {
      const summary = isSummaryRequest(body);
      if (summary && !switched) {
        // The switch is sent, and answered, while this summarizer call is held open.
        switched = await runCli(['policy', sessionId, '--auto-compact', 'off', '--json'], t.env, 120_000);
      }
      return model.fallback(body);
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const started = await startGoal(t, server, objective, ['--context-window', '12000']);
      sessionId = started.sessionId as string;
      await waitFor('a summarizer call and the switch', () => switched !== null, 240_000, 500);
      expect(switched!.code, switched!.stderr).toBe(0);
      const done = expectJson(await runCli(['watch', sessionId, '--json'], t.env, 300_000));
      expect(done.status).toBe('completed');
      const policy = expectJson(await runCli(['policy', sessionId, '--json'], t.env));
      expect(policy.autoCompact).toBe('off');
      // Auto-compact stayed off: after the compaction the switch was made during, only the hard limit
      // (a request that would not fit the window) may compact again, never the threshold.
      const streamed = await runCli(
        ['watch', sessionId, '--from-start', '--output-format', 'stream-json'],
        t.env,
      );
      const compactions = streamed.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line))
        .filter((event) => event.type === 'compaction');
      expect(compactions.length, streamed.stdout.slice(-2000)).toBeGreaterThanOrEqual(1);
      expect(compactions[0].kind).toBe('auto');
      expect(compactions.slice(1).map((event) => event.kind)).toEqual(
        compactions.slice(1).map(() => 'forced'),
      );
      expect(model.seen.filter((request) => request.kind === 'summary')).toHaveLength(compactions.length);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 480_000);

  it('carries out /compact while the goal waits at a limit', async () => {
    const t = goalTestEnv('cq-limit');
    const objective = `queue-limit-${randomUUID().slice(0, 8)}`;
    server.setFallback((body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      return { toolCalls: [{ name: 'bash', args: { command: `echo step ${requestStep(body)}` } }] };
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const started = await startGoal(t, server, objective, ['--max-steps', '2']);
      const sessionId = started.sessionId as string;
      await waitFor(
        'the goal to wait at its limit',
        async () => (await statusOf(t, sessionId)).status === 'limit_reached',
        180_000,
        500,
      );
      const steered = expectJson(await runCli(['steer', sessionId, '/compact', '--json'], t.env, 120_000));
      expect(steered.delivery).toBe('done');
      expect(steered.result?.command).toBe('compact');
      const compacted = await runCli(['compact', sessionId, '--json'], t.env, 120_000);
      expect(compacted.code, compacted.stderr).not.toBe(2);
      expect(JSON.parse(compacted.stdout).stage).toBeDefined();
      expect((await statusOf(t, sessionId)).status).toBe('limit_reached');
      expect((await runCli(['cancel', sessionId, '--wait'], t.env)).code).toBe(0);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 420_000);
});
