/**
 * Acceptance 3: cancel during a long bash command kills its process group and saves a checkpoint
 * with a kept-progress summary that names the interrupted call (and none when only the model was
 * working); resume finishes the goal with the step count and history carried over.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

/** Live `sleep <marker>` processes, found by command line: pids inside the sandbox mean nothing out here. */
function sleepersAlive(marker: string): boolean {
  return fs.readdirSync('/proc').some((entry) => {
    try {
      return (
        /^\d+$/.test(entry) && fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8') === `sleep\0${marker}\0`
      );
    } catch {
      return false;
    }
  });
}

const MARKER = `300.${process.pid}`;
const LONG_COMMAND = `echo started > pgid.txt; sleep ${MARKER} & sleep ${MARKER}`;

describe('cancel and resume', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('kills the running command, saves progress, and resumes with the history', async () => {
    const t = goalTestEnv('cancel');
    server.enqueue(
      {
        text: 'First a marker file.',
        toolCalls: [{ name: 'file-write', args: { path: 'a.txt', content: 'kept\n' } }],
      },
      {
        toolCalls: [{ name: 'bash', args: { command: LONG_COMMAND } }],
      },
    );
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId, workflowId } = await startGoal(t, server, 'write a.txt then wait');
      expect(workflowId).toContain(sessionId);
      const pgidFile = path.join(t.workspace, 'pgid.txt');
      await waitFor('the long command to start', () => fs.existsSync(pgidFile) && sleepersAlive(MARKER));

      const cancelled = await runCli(['cancel', sessionId], t.env);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      const view = await waitFor('the goal to be cancelled', async () => {
        const shown = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
        return shown.status === 'cancelled' ? shown : undefined;
      });
      expect(sleepersAlive(MARKER)).toBe(false);
      expect(view.steps).toBe(2);
      expect(view.keptProgress).toMatch(/Interrupted after 2 steps/);
      // The call the cancel cut short is named, and the last finished one apart from it.
      expect(view.keptProgress).toContain(`Interrupted call: bash: ${LONG_COMMAND}`);
      expect(view.keptProgress).toContain('Last tool call: file-write: a.txt');

      const store = await testStore(t.databaseUrl);
      const checkpoint = await store.latestCheckpoint(sessionId);
      expect(checkpoint?.goalState).toMatchObject({ status: 'cancelled', steps: 2 });
      const events = await store.listEvents(sessionId);
      expect(events.some((event) => event.kind === 'kept-progress')).toBe(true);

      server.enqueue(
        { toolCalls: [{ name: 'file-read', args: { path: 'a.txt' } }] },
        { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'resumed and finished' } }] },
      );
      const before = server.requests.length;
      const resumed = await runCli(['resume', sessionId, '--no-worker', '--json'], t.env);
      expect(resumed.code, resumed.stderr).toBe(0);
      const final = JSON.parse(resumed.stdout);
      expect(final).toMatchObject({ status: 'completed', steps: 4, sessionId });

      // The first request after resume holds the earlier structured history.
      const context = JSON.stringify(server.requests[before].body);
      expect(context).toContain('First a marker file.');
      expect(context).toContain('file-write');
      expect(context).toContain('not run to completion');
      expect(context).toContain('has now been resumed');

      const messages = await store.listMessages(sessionId);
      expect(new Set(messages.map((m) => m.key)).size).toBe(messages.length);
      const calls = messages
        .flatMap((m) => (m.message.role === 'assistant' ? m.message.content : []))
        .filter((p) => p.type === 'tool-call');
      const results = messages.flatMap((m) => (m.message.role === 'tool' ? m.message.content : []));
      expect(results.map((r) => r.toolCallId).sort()).toEqual(
        calls.map((c) => (c as { toolCallId: string }).toolCallId).sort(),
      );
      await store.close();
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });

  it('names no interrupted call when the cancel comes during a model call', async () => {
    const t = goalTestEnv('cancel-model');
    server.enqueue(
      { toolCalls: [{ name: 'file-write', args: { path: 'a.txt', content: 'kept\n' } }] },
      // Held mid-stream until the cancel aborts it: no tool runs when the goal is cancelled.
      { text: 'thinking for a long time', delayMs: 120_000 },
    );
    const worker = spawnCli(['worker'], t.env);
    try {
      const before = server.requests.length;
      const { sessionId } = await startGoal(t, server, 'write a.txt then think');
      await waitFor('the second model call to start', () => server.requests.length >= before + 2);

      const cancelled = await runCli(['cancel', sessionId], t.env);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      const view = await waitFor('the goal to be cancelled', async () => {
        const shown = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
        return shown.status === 'cancelled' ? shown : undefined;
      });
      expect(view.keptProgress).toMatch(/Interrupted after 2 steps/);
      expect(view.keptProgress).toContain('Last tool call: file-write: a.txt');
      expect(view.keptProgress).not.toContain('Interrupted call');
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
