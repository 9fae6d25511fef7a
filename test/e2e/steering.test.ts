/**
 * Issue 11 acceptance 1 and 2: a steering message sent while a model step runs reaches the very
 * next request, is stored once, and survives a worker SIGKILL between the update and the next
 * step; every app command works from `steer` and from its own verb, an unknown one is refused, and
 * the model never sees a `/` command.
 */
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcTemporalReader } from '../../cli/temporal-grpc';
import { livePollers } from '../../cli/worker-presence';
import { packageVersion } from '../../worker/build-info';
import { expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { gate, startGoal, statusOf } from '../support/goal-steps';
import { historyJson, saveHistoryFixture } from '../support/history-fixtures';
import {
  type ChatRequestBody,
  type OpenAITestServer,
  requestStep,
  startOpenAITestServer,
} from '../support/openai-test-server';

const ACCEPTED = temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED;

/** The text of every message of a request, in order. */
function texts(body: ChatRequestBody): string[] {
  return (body.messages ?? []).map((message) =>
    typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? ''),
  );
}

describe('steering', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

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
      const started = await startGoal(t, server, 'write two files');
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

      const watched = expectJson(await runCli(['watch', sessionId, '--json'], t.env, 240_000));
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

  it('is kept while no worker runs and delivered once, at the first step a new worker makes', async () => {
    const t = goalTestEnv('steer-down');
    const message = 'Write THREE.txt as well.';
    // Ticks until the model is shown the message, then finishes: the goal ends only if it arrives.
    // Each tick differs, so the runaway breaker never takes them for a loop.
    let tick = 0;
    server.setFallback((body) =>
      texts(body).some((text) => text.includes(message))
        ? { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'steered while down' } }] }
        : { toolCalls: [{ name: 'bash', args: { command: `echo tick ${++tick}` } }] },
    );
    let worker = spawnCli(['worker'], t.env);
    const store = await testStore(t.databaseUrl);
    const client = new Client({ connection: await Connection.connect({ address: t.temporalAddress }) });
    try {
      const before = server.requests.length;
      const started = await startGoal(t, server, 'tick until told');
      const sessionId = started.sessionId as string;
      await waitFor('two steps', () => server.requests.length >= before + 2);
      // A graceful stop: the step in flight finishes, then nothing runs the goal.
      await killAndWait(worker, 'SIGTERM');
      const stoppedAt = server.requests.length;
      // Temporal still lists the stopped worker as a poller for a while, so `steer` first tries an
      // update; nobody accepts it, and the message goes as a durable signal instead of hanging.
      // (The gRPC reader given directly: a lazy require of a .ts module does not resolve in-process here.)
      expect(await livePollers(new GrpcTemporalReader(client), t.taskQueue)).toBeGreaterThan(0);
      const steered = expectJson(await runCli(['steer', sessionId, message, '--json'], t.env));
      expect(steered.delivery).toBe('queued');
      expect(server.requests.length).toBe(stoppedAt);
      expect((await store.listMessages(sessionId)).some((m) => m.key.startsWith('steer:'))).toBe(false);

      worker = spawnCli(['worker'], t.env);
      const watched = expectJson(await runCli(['watch', sessionId, '--json'], t.env, 180_000));
      expect(watched).toMatchObject({ status: 'completed', finishSummary: 'steered while down' });
      const after = server.requests.slice(stoppedAt);
      // The first step the new worker starts carries it, once, as the last message. Before it there may
      // be one request without it: the step the stopping worker had in flight, which a slow machine
      // let run past the shutdown grace, asked again (it was scheduled before the message came).
      const first = after.findIndex((request) => texts(request.body).some((text) => text.includes(message)));
      expect(first, 'a request after the restart carries the message').toBeGreaterThanOrEqual(0);
      expect(first).toBeLessThanOrEqual(1);
      const shown = texts(after[first].body);
      expect(shown.filter((text) => text.includes(message))).toHaveLength(1);
      expect(shown.at(-1)).toContain(`[steering from `);
      for (const request of server.requests.slice(before, stoppedAt)) {
        expect(JSON.stringify(request.body)).not.toContain(message);
      }
      const stored = (await store.listMessages(sessionId)).filter((m) => m.key.startsWith('steer:'));
      expect(stored).toHaveLength(1);
      expect(JSON.stringify(stored[0].message.content)).toContain(message);
    } finally {
      server.setFallback(undefined);
      await store.close();
      await client.connection.close();
      await killAndWait(worker, 'SIGTERM');
    }
  }, 420_000);

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
      const started = await startGoal(t, server, 'finish at once');
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
      const status = await statusOf(t, sessionId);
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
    const mains = () => server.requests.filter((r) => (r.body.tools?.length ?? 0) > 0).length;
    server.setFallback((body) => {
      // The summarizer's request has no tools: a summary in the six sections.
      if ((body.tools?.length ?? 0) === 0) {
        return {
          text: '## Goal\ntick\n## Decisions and findings\n- ticks\n## Files modified\n(none)\n## Current state\nticking\n## Next steps\n- tick\n## References\n- none',
        };
      }
      return release
        ? { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] }
        : // A new tick each time: the same call with the same output five times would trip the runaway breaker.
          {
            text: 'working',
            toolCalls: [{ name: 'bash', args: { command: `sleep 0.3; echo tick ${mains()}` } }],
          };
    });
    const worker = spawnCli(['worker'], t.env);
    const store = await testStore(t.databaseUrl);
    try {
      const started = await startGoal(t, server, 'tick until told');
      const id = started.sessionId as string;
      const firstRequest = server.requests.length;
      await waitFor('a step', () => server.requests.length > firstRequest);
      const steer = async (...args: string[]) => expectJson(await runCli([...args, '--json'], t.env));
      const steeringRows = async () =>
        (await store.listMessages(id)).filter((m) => m.key.startsWith('steer:'));

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

      // Four steering messages, more than the three a compaction used to keep; `steer` answers with
      // the seq each is stored at, in JSON and in text.
      const sent = await steer('steer', id, 'STEER-1: keep the ticks short.');
      expect(sent.delivery).toBe('done');
      expect(sent.seq).toBe((await steeringRows())[0].seq);
      expect((sent.result as { seq: number }).seq).toBe(sent.seq);
      const inText = await runCli(['steer', id, 'STEER-2: count them.'], t.env);
      expect(inText.code, inText.stderr).toBe(0);
      expect(inText.stdout).toContain(`(message #${(await steeringRows())[1].seq})`);
      await steer('steer', id, 'STEER-3: say tick.');
      await steer('steer', id, 'STEER-4: never stop on your own.');
      const steering = await steeringRows();
      expect(steering).toHaveLength(4);
      // Enough exchanges after them that all four lie in the span a summary replaces.
      const afterSteering = mains();
      await waitFor('four more steps', () => mains() >= afterSteering + 4);

      const compacted = await steer('steer', id, '/compact the ticks');
      expect(compacted.result).toMatchObject({ command: 'compact', compaction: { stage: 'summarized' } });
      const summaries = (await store.listMessages(id)).filter((m) => m.key.startsWith('summary:'));
      expect(summaries).toHaveLength(1);
      const compactionEvents = (await store.listEvents(id)).filter((e) => e.kind === 'compaction');
      expect(compactionEvents).toHaveLength(1);
      expect(compactionEvents[0].data).toMatchObject({ kind: 'manual' });
      // The next request shows the summary and, verbatim after it, every steering message.
      const afterCompact = server.requests.length;
      await waitFor('a step after the compaction', () =>
        server.requests.slice(afterCompact).find((r) => (r.body.tools?.length ?? 0) > 0),
      );
      const next = server.requests.slice(afterCompact).find((r) => (r.body.tools?.length ?? 0) > 0)!;
      const shown = texts(next.body);
      const summaryAt = shown.findIndex((text) => text.includes('## Decisions and findings'));
      expect(summaryAt).toBeGreaterThan(0);
      const steeringAt = [1, 2, 3, 4].map((n) => shown.findIndex((text) => text.includes(`STEER-${n}:`)));
      expect(steeringAt.every((at) => at > summaryAt)).toBe(true);
      expect([...steeringAt].sort((a, b) => a - b)).toEqual(steeringAt);

      await steer('model', id, 'openai-compatible:other-model');
      await waitFor('a request to the new model', () =>
        server.requests.some((r) => r.body.model === 'other-model'),
      );
      await waitFor('usage by the new model in stats', async () => {
        const stats = expectJson(await runCli(['stats', id, '--json'], t.env));
        const byModel = stats.breakdown as Record<string, { requests: number }>;
        return (byModel['openai-compatible:other-model']?.requests ?? 0) > 0 && byModel;
      });

      await steer('pause', id);
      await waitFor('paused', async () => (await statusOf(t, id)).status === 'paused');
      const pausedAt = server.requests.length;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(server.requests.length).toBe(pausedAt);
      await steer('unpause', id);
      await waitFor('going on', () => server.requests.length > pausedAt);

      const cleared = await steer('clear', id);
      const fresh = (cleared.result as { newSessionId: string }).newSessionId;
      expect(fresh).toMatch(/^[0-9a-f]{12}-/);
      const old = await statusOf(t, id);
      expect(old.status).toBe('cleared');
      // The fresh session: same workspace, same objective.
      const freshStatus = await statusOf(t, fresh);
      expect(freshStatus).toMatchObject({ workspace: t.workspace, objective: 'tick until told' });
      // The old transcript is whole: every stored message, the steering among them.
      const oldRows = await store.listMessages(id);
      const transcript = await runCli(['transcript', id, '--format', 'jsonl'], t.env);
      expect(transcript.code, transcript.stderr).toBe(0);
      const lines = transcript.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.map((line) => line.seq)).toEqual(oldRows.map((row) => row.seq));
      expect(lines[0]).toMatchObject({ kind: 'first' });
      expect(lines.filter((line) => line.kind === 'steering')).toHaveLength(4);
      release = true;
      const next2 = expectJson(await runCli(['watch', fresh, '--json'], t.env, 120_000));
      expect(next2).toMatchObject({ status: 'completed', objective: 'tick until told' });
      // The model saw none of it.
      for (const request of server.requests.slice(firstRequest)) {
        for (const text of texts(request.body))
          expect(text).not.toMatch(/\/(help|paws|rename|limits|compact|pause|unpause|model|clear|jobs)\b/);
      }
      if (process.env.GOALRUN_SAVE_HISTORY_FIXTURE) {
        // A history with every app command, for test/workflow/replay.test.ts.
        const connection = await Connection.connect({ address: t.temporalAddress });
        const history = await new Client({ connection }).workflow
          .getHandle(started.workflowId as string)
          .fetchHistory();
        await connection.close();
        saveHistoryFixture(packageVersion(), 'steering-commands', [historyJson(history)]);
      }
      // The transcript records the model switch.
      const notes = (await store.listMessages(id)).filter((m) => m.key.startsWith('notice:'));
      expect(notes.some((m) => JSON.stringify(m.message.content).includes('model switched'))).toBe(true);

      // The old session stays resumable (after the fixture above: a resume starts a new run of its
      // workflow): it goes on from where it was cleared.
      const resumed = expectJson(
        await runCli(['resume', id, '--no-worker', '--message', 'finish now', '--json'], t.env, 120_000),
      );
      expect(resumed).toMatchObject({ status: 'completed', sessionId: id });
      expect(resumed.steps as number).toBeGreaterThan(old.steps as number);
    } finally {
      server.setFallback(undefined);
      await store.close();
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
