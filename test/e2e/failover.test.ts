/**
 * Issue 27 §3 end to end: a primary and a backup model on two local OpenAI-compatible servers (real
 * HTTP), the built CLI, a worker, the suite's Temporal dev server. Three overloaded answers in a row
 * move the step to the backup; a 401 does not; after the cooldown a step probes the primary and the
 * goal stays there after one success. `stats --json` shows requests, tokens, cost and steps per model,
 * each priced on its own card.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIdOf } from '../../core/workflow-names';
import { expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { gate, startGoal } from '../support/goal-steps';
import {
  type OpenAITestServer,
  promptText,
  startOpenAITestServer,
  type TestResponse,
} from '../support/openai-test-server';

/** The built workflow bundle, which the worker ran: the histories must replay on it. */
const BUNDLE = path.resolve(__dirname, '../../dist/workflow-bundle.js');
const PRIMARY = 'openai-compatible:primary-model';
const BACKUP = 'openai-compatible:backup-model';
/** Output at $10 (primary) and $1 (backup) per million: a 1,000-token answer costs $0.01 or $0.001. */
const CARDS = [
  { model: 'primary-model', window: 128_000, outputPerMTok: 10 },
  { model: 'backup-model', window: 64_000, outputPerMTok: 1 },
];

const usage = { prompt_tokens: 400, completion_tokens: 1_000 };
const bash = (command: string): TestResponse => ({
  toolCalls: [{ name: 'bash', args: { command } }],
  usage,
});
const finish: TestResponse = {
  toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }],
  usage,
};
/** Anthropic's overload answer, and OpenAI's; both ask for a retry after a second. */
const overloaded529: TestResponse = {
  status: 529,
  headers: { 'Retry-After': '1' },
  body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
};
const overloaded503: TestResponse = {
  status: 503,
  headers: { 'Retry-After': '1' },
  body: { error: { message: 'The server is overloaded', type: 'server_is_overloaded' } },
};
const unauthorized: TestResponse = {
  status: 401,
  body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } },
};

/** A server whose answers are scripted per goal (by objective); a script entry may be a function. */
async function scriptedServer(
  scripts: Map<string, Array<TestResponse | (() => Promise<TestResponse>)>>,
): Promise<OpenAITestServer> {
  return startOpenAITestServer({
    fallback: async (body) => {
      for (const [objective, answers] of scripts) {
        if (!promptText(body).includes(objective)) continue;
        const next = answers.shift();
        if (next === undefined)
          return { status: 400, body: { error: { message: `script of ${objective} ran out` } } };
        return typeof next === 'function' ? next() : next;
      }
      return { status: 400, body: { error: { message: 'no script for this goal' } } };
    },
  });
}

/** The user's cards of both models and the config that names the backup and its server. */
function setUp(name: string, backupUrl: string, cooldownS: number) {
  const t = goalTestEnv(name, { OPENAI_COMPATIBLE_API_KEY: 'sk-test-key' });
  for (const card of CARDS) {
    const dir = path.join(t.home, 'cards', 'openai-compatible');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, `${card.model}.json`),
      JSON.stringify({
        provider: 'openai-compatible',
        model: card.model,
        advertisedContextTokens: card.window,
        maxOutputTokens: 1_000,
        prices: { inputPerMTok: 0, outputPerMTok: card.outputPerMTok },
        source: 'test',
      }),
    );
  }
  fs.writeFileSync(
    path.join(t.home, 'config.json'),
    JSON.stringify({ backup_base_url: backupUrl, failover_cooldown_s: cooldownS }),
  );
  return t;
}

describe('failover to the backup model', () => {
  let primary: OpenAITestServer;
  let backup: OpenAITestServer;
  const primaryScripts = new Map<string, Array<TestResponse | (() => Promise<TestResponse>)>>();
  const backupScripts = new Map<string, Array<TestResponse | (() => Promise<TestResponse>)>>();
  beforeAll(async () => {
    primary = await scriptedServer(primaryScripts);
    backup = await scriptedServer(backupScripts);
  });
  afterAll(async () => {
    await primary?.close();
    await backup?.close();
  });
  const requestsOf = (server: OpenAITestServer, objective: string) =>
    server.requests.filter((request) => promptText(request.body).includes(objective));

  it('moves the next step to the backup after three overloaded answers in a row', async () => {
    const t = setUp('failover-529', backup.url, 3_600);
    const objective = 'failover-529: echo once';
    primaryScripts.set(objective, [bash('echo one'), overloaded529, overloaded503, overloaded529]);
    backupScripts.set(objective, [finish]);
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, primary, objective, ['--backup-model', BACKUP], PRIMARY);
      const done = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
      expect(done.code, `${done.stdout}\n${done.stderr}`).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed', steps: 2, model: BACKUP });

      // The primary answered step 1 and then was overloaded three times; the backup took step 2.
      expect(requestsOf(primary, objective).map((r) => r.body.model)).toEqual(Array(4).fill('primary-model'));
      expect(requestsOf(backup, objective).map((r) => r.body.model)).toEqual(['backup-model']);
      // Its key is the same variable's: the backup server got it, never anything else.
      expect(requestsOf(backup, objective)[0].headers.authorization).toBe('Bearer sk-test-key');

      const stats = expectJson(await runCli(['stats', sessionId, '--json'], t.env));
      expect(stats.steps).toEqual({ [PRIMARY]: 1, [BACKUP]: 1 });
      expect(stats.failover).toMatchObject({
        active: 'backup',
        primary: PRIMARY,
        model: BACKUP,
        switches: 1,
      });
      // Each model's calls are priced on its own card.
      expect(stats.breakdown[PRIMARY]).toMatchObject({ requests: 1, outputTokens: 1_000 });
      expect(stats.breakdown[PRIMARY].costUsd).toBeCloseTo(0.01, 9);
      expect(stats.breakdown[BACKUP]).toMatchObject({ requests: 1, outputTokens: 1_000 });
      expect(stats.breakdown[BACKUP].costUsd).toBeCloseTo(0.001, 9);
      const text = await runCli(['stats', sessionId], t.env);
      expect(text.stdout).toContain(`steps per model:  ${BACKUP} 1, ${PRIMARY} 1`);
      expect(text.stdout).toContain(`failover:         1 switch, now on the backup ${BACKUP}`);

      // The switch is an event, and the budget was resolved for the backup's smaller card.
      const store = await testStore(t.databaseUrl);
      try {
        const event = await store.getEventByKey(sessionId, 'failover:1:backup@1');
        expect(event?.data).toMatchObject({ step: 2, from: PRIMARY, to: BACKUP, direction: 'backup' });
        expect((event?.data as { reason?: string } | undefined)?.reason).toMatch(
          /3 provider failures in a row.*HTTP 529/,
        );
      } finally {
        await store.close();
      }
      const policy = expectJson(await runCli(['policy', sessionId, '--json'], t.env));
      expect(policy.windowTokens).toBe(64_000);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);

  it('moves to the backup when the primary goes down in the middle of a goal (connection refused)', async () => {
    const t = setUp('failover-down', backup.url, 3_600);
    const objective = 'failover-down: wait for go';
    // A primary of its own, closed while step 1's command runs: step 2 finds nobody listening.
    const scripts = new Map<string, Array<TestResponse | (() => Promise<TestResponse>)>>();
    const doomed = await scriptedServer(scripts);
    scripts.set(objective, [bash('touch started && while [ ! -f go ]; do sleep 0.2; done')]);
    backupScripts.set(objective, [finish]);
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, doomed, objective, ['--backup-model', BACKUP], PRIMARY);
      await waitFor('step 1 command to run', () => fs.existsSync(path.join(t.workspace, 'started')), 120_000);
      await doomed.close();
      fs.writeFileSync(path.join(t.workspace, 'go'), '');
      const done = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
      expect(done.code, `${done.stdout}\n${done.stderr}`).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed', steps: 2, model: BACKUP });
      expect(requestsOf(backup, objective)).toHaveLength(1);
      const stats = expectJson(await runCli(['stats', sessionId, '--json'], t.env));
      expect(stats.steps).toEqual({ [PRIMARY]: 1, [BACKUP]: 1 });
      const store = await testStore(t.databaseUrl);
      try {
        const event = await store.getEventByKey(sessionId, 'failover:1:backup@1');
        expect((event?.data as { reason?: string } | undefined)?.reason).toMatch(
          /3 provider failures in a row.*network error/,
        );
      } finally {
        await store.close();
      }
    } finally {
      await killAndWait(worker, 'SIGTERM');
      await doomed.close().catch(() => undefined);
    }
  }, 300_000);

  it('does not switch on a 401: the goal fails as it did without a backup', async () => {
    const t = setUp('failover-401', backup.url, 3_600);
    const objective = 'failover-401: echo once';
    primaryScripts.set(objective, [unauthorized]);
    backupScripts.set(objective, [finish]);
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, primary, objective, ['--backup-model', BACKUP], PRIMARY);
      const done = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
      expect(done.code).not.toBe(0);
      const final = JSON.parse(done.stdout);
      expect(final).toMatchObject({ status: 'failed', model: PRIMARY });
      expect(final.reason).toContain('401');
      expect(requestsOf(primary, objective)).toHaveLength(1);
      expect(requestsOf(backup, objective)).toHaveLength(0);
      const stats = expectJson(await runCli(['stats', sessionId, '--json'], t.env));
      expect(stats.failover).toBeNull();
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);

  it('probes the primary after the cooldown and stays on it after one success', async () => {
    // Long enough that step 1 on the backup (a model call, a sandboxed bash, its writes) cannot outlast
    // it on a loaded machine: step 2 would then probe the primary, and the backup's step 2 never come.
    const cooldownS = 15;
    const t = setUp('failover-back', backup.url, cooldownS);
    const objective = 'failover-back: echo twice';
    // Step 2 on the backup is held until the cooldown has passed since it was asked (the switch came
    // before): the boundary after it finds the cooldown over, and step 3 probes the primary.
    const held = gate();
    let heldSince = 0;
    primaryScripts.set(objective, [overloaded503, overloaded503, overloaded503, finish]);
    backupScripts.set(objective, [
      bash('echo one'),
      async () => {
        heldSince = Date.now();
        await held.opened;
        return bash('echo two');
      },
    ]);
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, primary, objective, ['--backup-model', BACKUP], PRIMARY);
      await waitFor('step 2 on the backup', () => heldSince > 0, 120_000);
      const waitMs = heldSince + cooldownS * 1_000 + 500 - Date.now();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, waitMs)));
      held.open();
      const done = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
      expect(done.code, `${done.stdout}\n${done.stderr}`).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed', steps: 3, model: PRIMARY });
      expect(requestsOf(primary, objective)).toHaveLength(4);
      expect(requestsOf(backup, objective)).toHaveLength(2);
      const stats = expectJson(await runCli(['stats', sessionId, '--json'], t.env));
      expect(stats.steps).toEqual({ [PRIMARY]: 1, [BACKUP]: 2 });
      expect(stats.failover).toMatchObject({ active: 'primary', primary: PRIMARY, switches: 2 });
      const store = await testStore(t.databaseUrl);
      try {
        const kinds = (await store.listEvents(sessionId))
          .filter((event) => event.kind === 'failover')
          .map((event) => (event.data as { direction: string; step: number }).direction);
        expect(kinds).toEqual(['backup', 'probe', 'primary']);
      } finally {
        await store.close();
      }
      // The event stream shows every switch.
      const stream = await runCli(
        ['watch', sessionId, '--from-start', '--output-format', 'stream-json'],
        t.env,
      );
      const switches = stream.stdout
        .split('\n')
        .filter((line) => line.includes('"type":"failover"'))
        .map((line) => JSON.parse(line));
      expect(switches.map((event) => [event.direction, event.step, event.from, event.to])).toEqual([
        ['backup', 1, PRIMARY, BACKUP],
        ['probe', 3, BACKUP, PRIMARY],
        ['primary', 3, BACKUP, PRIMARY],
      ]);
      // The switches, the probe and the return replay without a determinism violation.
      const connection = await Connection.connect({ address: t.temporalAddress });
      try {
        const workflowId = workflowIdOf(sessionId);
        const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
        await Worker.runReplayHistory({ workflowBundle: { codePath: BUNDLE } }, history, workflowId);
      } finally {
        await connection.close();
      }
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);
});
