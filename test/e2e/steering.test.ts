/**
 * Issue 11 acceptance 1 and 2: a steering message sent while a model step runs reaches the very
 * next request, is stored once, and survives a worker SIGKILL between the update and the next
 * step; every app command works from `steer` and from its own verb, an unknown one is refused, and
 * the model never sees a `/` command.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { type GoalTestEnv, goalTestEnv, testStore } from '../support/goal-env';
import {
  type ChatRequestBody,
  type OpenAITestServer,
  requestStep,
  startOpenAITestServer,
} from '../support/openai-test-server';

const MODEL = 'openai-compatible:test-model';
const STEERING_FIXTURE = path.resolve(__dirname, '../fixtures/histories/steering-commands.json');
const ACCEPTED = temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED;

/** The text of every message of a request, in order. */
function texts(body: ChatRequestBody): string[] {
  return (body.messages ?? []).map((message) =>
    typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? ''),
  );
}

/** A promise the test opens when it is ready: holds a model answer back. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

function json(result: CliResult): Record<string, unknown> {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  return JSON.parse(result.stdout);
}

describe('steering', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  /** Starts a goal against the test server and returns `start --json`'s answer. */
  async function startGoal(t: GoalTestEnv, objective: string): Promise<Record<string, unknown>> {
    return json(
      await runCli(
        [
          'start',
          objective,
          '--workspace',
          t.workspace,
          '--model',
          MODEL,
          '--base-url',
          server.url,
          '--json',
        ],
        t.env,
      ),
    );
  }

  it('reaches the next request once, also across a worker SIGKILL after the update', async () => {
    const t = goalTestEnv('steer');
    // The step during which the message is sent is held open until the worker is dead, so the
    // message always arrives mid-step, however slow the machine.
    const held = gate();
    server.setFallback(async (body) => {
      const step = requestStep(body);
      if (step === 1)
        return { toolCalls: [{ name: 'file-write', args: { path: 'a.txt', content: 'one\n' } }] };
      if (step === 2) {
        await held.opened;
        return { toolCalls: [{ name: 'bash', args: { command: 'echo two' } }] };
      }
      return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'steered' } }] };
    });
    let worker = spawnCli(['worker'], t.env);
    const store = await testStore(t.databaseUrl);
    const client = new Client({ connection: await Connection.connect({ address: t.temporalAddress }) });
    try {
      const before = server.requests.length;
      const started = await startGoal(t, 'write two files');
      const sessionId = started.sessionId as string;
      await waitFor('the held step', () => server.requests.length >= before + 2);
      const steer = spawnCli(['steer', sessionId, 'Use tabs, not spaces.', '--json'], t.env);
      const handle = client.workflow.getHandle(started.workflowId as string);
      await waitFor('the update to be accepted', async () =>
        (await handle.fetchHistory()).events?.some((event) => event.eventType === ACCEPTED),
      );
      await killAndWait(worker, 'SIGKILL');
      held.open();
      worker = spawnCli(['worker'], t.env);
      const steered = await new Promise<string>((resolve) =>
        steer.once('exit', () => resolve(steer.output())),
      );
      expect(steered).toMatch(/"delivery":\s*"(done|accepted)"/);
      expect(steered).not.toContain('undelivered');

      const watched = json(await runCli(['watch', sessionId, '--json'], t.env, 240_000));
      expect(watched.status).toBe('completed');
      const requests = server.requests.slice(before);
      const first = requests.findIndex((request) =>
        texts(request.body).some((text) => text.includes('Use tabs, not spaces.')),
      );
      // Not in the held step nor its retry: in the very next one, right after that step's result.
      expect(first).toBeGreaterThan(0);
      expect(requestStep(requests[first].body)).toBe(3);
      const shown = requests[first].body.messages ?? [];
      expect(shown.at(-2)?.role).toBe('tool');
      expect(texts(requests[first].body).at(-1)).toContain(`[steering from `);
      expect(
        requests
          .slice(first)
          .every((request) => texts(request.body).some((text) => text.includes('Use tabs'))),
      ).toBe(true);
      const stored = (await store.listMessages(sessionId)).filter((m) => m.key.startsWith('steer:'));
      expect(stored).toHaveLength(1);
      expect(stored[0].meta?.from).toMatch(/@/);
    } finally {
      held.open();
      await store.close();
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);

  it('says a message sent during the last step was not delivered, and never shows it to the model', async () => {
    const t = goalTestEnv('steer-late');
    const held = gate();
    server.setFallback(async () => {
      await held.opened;
      return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done early' } }] };
    });
    const worker = spawnCli(['worker'], t.env);
    const client = new Client({ connection: await Connection.connect({ address: t.temporalAddress }) });
    try {
      const before = server.requests.length;
      const started = await startGoal(t, 'finish at once');
      const sessionId = started.sessionId as string;
      await waitFor('the last step', () => server.requests.length > before);
      const steer = spawnCli(['steer', sessionId, 'Also update the changelog.'], t.env);
      const handle = client.workflow.getHandle(started.workflowId as string);
      await waitFor('the update to be accepted', async () =>
        (await handle.fetchHistory()).events?.some((event) => event.eventType === ACCEPTED),
      );
      held.open();
      const code = await new Promise<number | null>((resolve) => steer.once('exit', resolve));
      expect(steer.output()).toContain(
        `not delivered: the goal ended (completed) before its next step; to give it this instruction: goalrun resume ${sessionId} --message`,
      );
      expect(code).toBe(1);
      const status = json(await runCli(['status', sessionId, '--json'], t.env));
      expect(status.status).toBe('completed');
      expect(JSON.stringify(status)).toContain('not delivered: the goal ended (completed)');
      for (const request of server.requests.slice(before)) {
        expect(JSON.stringify(request.body)).not.toContain('changelog');
      }
    } finally {
      held.open();
      await killAndWait(worker, 'SIGTERM');
    }
  });

  it('runs every app command, refuses an unknown one, and never shows a command to the model', async () => {
    const t = goalTestEnv('commands');
    let release = false;
    server.setFallback((body) =>
      release && (body.tools?.length ?? 0) > 0
        ? { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] }
        : { text: 'working', toolCalls: [{ name: 'bash', args: { command: 'sleep 0.3; echo tick' } }] },
    );
    const worker = spawnCli(['worker'], t.env);
    const store = await testStore(t.databaseUrl);
    try {
      const started = json(
        await runCli(
          [
            'start',
            'tick until told',
            '--workspace',
            t.workspace,
            '--model',
            MODEL,
            '--base-url',
            server.url,
            '--json',
          ],
          t.env,
        ),
      );
      const id = started.sessionId as string;
      const firstRequest = server.requests.length;
      await waitFor('a step', () => server.requests.length > firstRequest);
      const steer = async (...args: string[]) => json(await runCli([...args, '--json'], t.env));

      expect(((await steer('steer', id, '/help')).result as { text: string }).text).toContain(
        '/limits max_steps=N',
      );
      const unknown = await runCli(['steer', id, '/paws'], t.env);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/unknown command "\/paws".*\/pause/);
      const badLimit = await runCli(['steer', id, '/limits max_steps=0'], t.env);
      expect(badLimit.code).toBe(2);

      expect(((await steer('rename', id, 'ticking', 'goal')).result as { text: string }).text).toContain(
        'ticking goal',
      );
      expect((await store.getSession(id))?.name).toBe('ticking goal');
      expect(((await steer('jobs', id)) as unknown as unknown[]).length).toBe(0);
      expect(((await steer('limits', id, '--max-steps', '400')).result as { text: string }).text).toContain(
        'max_steps 500 → 400',
      );
      expect(((await steer('steer', id, '/compact the ticks')).result as { command: string }).command).toBe(
        'compact',
      );

      await steer('model', id, 'openai-compatible:other-model');
      await waitFor('a request to the new model', () =>
        server.requests.some((r) => r.body.model === 'other-model'),
      );

      await steer('pause', id);
      await waitFor(
        'paused',
        async () => json(await runCli(['status', id, '--json'], t.env)).status === 'paused',
      );
      const pausedAt = server.requests.length;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(server.requests.length).toBe(pausedAt);
      await steer('unpause', id);
      await waitFor('going on', () => server.requests.length > pausedAt);

      const cleared = await steer('clear', id);
      const fresh = (cleared.result as { newSessionId: string }).newSessionId;
      expect(fresh).toMatch(/^[0-9a-f]{12}-/);
      expect(json(await runCli(['status', id, '--json'], t.env)).status).toBe('cleared');
      release = true;
      const next = json(await runCli(['watch', fresh, '--json'], t.env, 120_000));
      expect(next).toMatchObject({ status: 'completed', objective: 'tick until told' });

      // The model saw none of it.
      for (const request of server.requests.slice(firstRequest)) {
        for (const text of texts(request.body))
          expect(text).not.toMatch(/\/(help|paws|rename|limits|compact|pause|clear|jobs)\b/);
      }
      if (process.env.GOALRUN_SAVE_HISTORY_FIXTURE) {
        // A history with every app command, for test/workflow/replay.test.ts.
        const connection = await Connection.connect({ address: t.temporalAddress });
        const history = await new Client({ connection }).workflow
          .getHandle(started.workflowId as string)
          .fetchHistory();
        await connection.close();
        fs.writeFileSync(STEERING_FIXTURE, JSON.stringify([history.toJSON()]));
      }
      // The transcript records the model switch.
      const notes = (await store.listMessages(id)).filter((m) => m.key.startsWith('notice:'));
      expect(notes.some((m) => JSON.stringify(m.message.content).includes('model switched'))).toBe(true);
    } finally {
      server.setFallback(undefined);
      await store.close();
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
