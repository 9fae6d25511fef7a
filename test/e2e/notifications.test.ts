/**
 * Issue 28 §2, notifications that reach a person: with config `notify` (a webhook with a secret), a
 * local HTTP receiver gets exactly one signed POST for each status a person must hear of —
 * waiting_approval, budget_reached, stalled (the workflow's own stall watch) and completed — each
 * carrying the session id, the status, the one line that says what is needed and the goal's page. A
 * receiver that never answers delays nothing: the goal completes while its request is still open.
 * Every wait is held by a gate the test opens (the model's answers, the receiver's), never a sleep.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { gate, startGoal } from '../support/goal-steps';
import { type OpenAITestServer, requestStep, startOpenAITestServer } from '../support/openai-test-server';
import { PRICED_MODEL, writePricedModelCard } from '../support/priced-model';

const SECRET = 'webhook-signing-secret-4411';

interface Received {
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown>;
}

/** A webhook receiver: records every POST; `hold` keeps the answer back (a receiver that hangs). */
async function startReceiver(options: { hold?: Promise<void> } = {}) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      received.push({ headers: req.headers, raw, body: JSON.parse(raw) });
      if (options.hold) void options.hold.then(() => res.end('ok'));
      else res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A turn reporting 1,000 output tokens: $0.01 on the priced card. */
const priced = (turn: Record<string, unknown>) => ({
  ...turn,
  usage: { prompt_tokens: 400, completion_tokens: 1_000 },
});

describe('notifications to a webhook', () => {
  let model: OpenAITestServer;
  const stallGate = gate();
  beforeAll(async () => {
    model = await startOpenAITestServer({
      fallback: async (body) => {
        const step = requestStep(body);
        if (step === 1)
          return priced({
            toolCalls: [
              {
                name: 'bash',
                args: {
                  command: 'echo outside',
                  sandbox_permissions: 'require_escalated',
                  justification: 'the test asks for it',
                },
              },
            ],
          });
        if (step === 2) return priced({ toolCalls: [{ name: 'bash', args: { command: 'echo two' } }] });
        if (step === 3) {
          // Held until the test has heard `stalled`: the step does not finish before then.
          await stallGate.opened;
          return priced({ toolCalls: [{ name: 'bash', args: { command: 'echo three' } }] });
        }
        return priced({ toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'all told' } }] });
      },
    });
  });
  afterAll(async () => {
    stallGate.open();
    await model?.close();
  });

  it('sends one signed webhook for each of waiting_approval, budget_reached, stalled and completed', {
    timeout: 420_000,
  }, async () => {
    const receiver = await startReceiver();
    const t = goalTestEnv('notify-webhook', { OPENAI_API_KEY: 'sk-test' });
    writePricedModelCard(t.home);
    fs.writeFileSync(
      path.join(t.home, 'config.json'),
      JSON.stringify({
        stalled_after_minutes: 1,
        notify: [{ type: 'webhook', url: receiver.url, secret: SECRET, page_url: 'http://phone.example/' }],
      }),
    );
    const worker = spawnCli(['worker'], t.env);
    let sessionId = '';
    // On a timeout, says where the goal was and what the receiver heard, so that a failure explains itself.
    const heard = (status: string) =>
      waitFor(
        `a ${status} webhook`,
        async () => receiver.received.find((request) => request.body.status === status),
        180_000,
        500,
      ).catch(async (err: Error) => {
        const shown = sessionId ? await runCli(['status', sessionId, '--json'], t.env) : null;
        const statuses = receiver.received.map((request) => request.body.status).join(', ') || 'none';
        throw new Error(
          `${err.message}; the receiver heard: ${statuses}; status: ${shown?.stdout.trim() || shown?.stderr.trim() || 'not started'}; worker exit: ${worker.exitCode}`,
        );
      });
    try {
      // Each step reserves $0.01: steps 1 and 2 fit under $0.025, step 3 waits for a raise.
      ({ sessionId } = await startGoal(
        t,
        model,
        'tell me when you need me',
        ['--approval', 'on-request', '--max-cost-usd', '0.025'],
        PRICED_MODEL,
      ));
      const approval = await heard('waiting_approval');
      expect(approval.body).toMatchObject({
        event: 'notify',
        session_id: sessionId,
        status: 'waiting_approval',
        resume_command: `goalrun approve ${sessionId}`,
        page_url: `http://phone.example/goals/${sessionId}`,
      });
      expect(approval.body.headline).toContain('waiting for approval — `echo outside` needs approval');
      expect((await runCli(['approve', sessionId], t.env)).code).toBe(0);

      const budget = await heard('budget_reached');
      expect(budget.body.headline).toContain(`goalrun limits ${sessionId} --max-cost-usd N`);
      expect((await runCli(['limits', sessionId, '--max-cost-usd', '1'], t.env)).code).toBe(0);

      // Step 3 is held by the model: no step finishes, and the workflow's stall watch says so.
      const stalled = await heard('stalled');
      expect(stalled.body).toMatchObject({ session_id: sessionId, status: 'stalled' });
      stallGate.open();

      const done = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(done.code, done.stderr).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed' });
      const completed = await heard('completed');
      expect(completed.body.headline).toMatch(/^completed — /);

      const statuses = receiver.received.map((request) => request.body.status);
      expect(statuses.sort()).toEqual(['budget_reached', 'completed', 'stalled', 'waiting_approval']);
      for (const request of receiver.received) {
        const expected = `sha256=${createHmac('sha256', SECRET).update(request.raw).digest('hex')}`;
        expect(request.headers['x-goalrun-signature']).toBe(expected);
        expect(request.headers['x-goalrun-delivery']).toMatch(/^notify:/);
        // The secret signs the body; it is never in it.
        expect(request.raw).not.toContain(SECRET);
      }
      // Nothing of the target reached the goal's own record.
      const events = await runCli(
        ['watch', sessionId, '--output-format', 'stream-json', '--from-start'],
        t.env,
      );
      expect(events.stdout).not.toContain(SECRET);
      expect(events.stdout).not.toContain(receiver.url);
    } finally {
      await killAndWait(worker, 'SIGTERM');
      await receiver.close();
    }
  });

  it('a receiver that never answers delays nothing: the goal completes while the request is open', {
    timeout: 240_000,
  }, async () => {
    const hold = gate();
    const receiver = await startReceiver({ hold: hold.opened });
    const t = goalTestEnv('notify-hanging', { OPENAI_API_KEY: 'sk-test' });
    fs.writeFileSync(
      path.join(t.home, 'config.json'),
      JSON.stringify({ notify: [{ type: 'webhook', url: receiver.url, format: 'slack' }] }),
    );
    const quick = await startOpenAITestServer();
    quick.enqueue({ toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'quick' } }] });
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, quick, 'finish at once');
      const done = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(done.code, done.stderr).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed' });
      // The goal ended; its notification may still be on its way. Once it arrives, it is still unanswered.
      const request = await waitFor(
        'the completed notification',
        async () => receiver.received.find((r) => r.body.status === 'completed'),
        120_000,
        500,
      );
      expect(request.body.text).toContain('*goalrun completed*');
      expect(request.headers['x-goalrun-signature']).toBeUndefined();
    } finally {
      hold.open();
      await killAndWait(worker, 'SIGTERM');
      await receiver.close();
      await quick.close();
    }
  });
});
