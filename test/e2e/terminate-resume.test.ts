/**
 * Issue 9 item 5: a run terminated from outside (`temporal workflow terminate`) in the middle of a
 * step is resumed with a consistent transcript: no answer stored twice, no call without its result,
 * no row of the dead execution reused, and the step count right.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTemporalBinary } from '../../cli/temporal-binary';
import { KEY_PREFIX } from '../../core/store-keys';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { pairingProblems } from '../support/compaction-model';
import { goalTestEnv, testStore } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

describe('resume after terminate', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it.each([
    ['during a tool call', 'bash'],
    ['during a model call', 'model'],
  ])('%s', async (_name, where) => {
    const t = goalTestEnv(`terminate-${where}`);
    const base = server.requests.length;
    server.enqueue({ toolCalls: [{ name: 'file-write', args: { path: 'a.txt', content: 'one\n' } }] });
    if (where === 'bash') {
      server.enqueue({ toolCalls: [{ name: 'bash', args: { command: 'touch started; sleep 300' } }] });
    } else {
      // The second model call hangs until the run is terminated.
      server.enqueue({ delayMs: 300_000, toolCalls: [] });
    }
    const worker = spawnCli(['worker'], t.env);
    const store = await testStore(t.databaseUrl);
    try {
      const { sessionId, workflowId } = await startGoal(t, server, 'write and wait');
      if (where === 'bash') {
        await waitFor('the long command', () => fs.existsSync(path.join(t.workspace, 'started')));
      } else {
        await waitFor('the second model call', () => server.requests.length >= base + 2);
      }
      const temporal = findTemporalBinary();
      if (!temporal) throw new Error('the temporal binary is needed');
      execFileSync(temporal, [
        'workflow',
        'terminate',
        '--address',
        t.temporalAddress,
        '--workflow-id',
        workflowId,
        '--reason',
        'test',
      ]);

      const before = server.requests.length;
      server.enqueue(
        { toolCalls: [{ name: 'file-read', args: { path: 'a.txt' } }] },
        { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done after terminate' } }] },
      );
      const resumed = await runCli(['resume', sessionId, '--no-worker', '--json'], t.env);
      expect(resumed.code, resumed.stderr).toBe(0);
      const final = JSON.parse(resumed.stdout);
      // bash case: write, bash (answered as interrupted), read, finish; model case: write, read, finish.
      expect(final).toMatchObject({ status: 'completed', steps: where === 'bash' ? 4 : 3 });
      const after = server.requests.slice(before);
      for (const request of after) expect(pairingProblems(request.body)).toEqual([]);
      expect(JSON.stringify(after[0].body)).toContain('has now been resumed');

      const messages = await store.listMessages(sessionId);
      expect(new Set(messages.map((m) => m.key)).size).toBe(messages.length);
      // No answer stored twice by content either: every logical step has one answer, in one execution
      // (steps 1..N, each once), and no two answers say the same (tool-call ids aside).
      const answers = messages.filter((m) => m.key.startsWith(KEY_PREFIX.assistant));
      const stepOf = (key: string) => Number(/^step:(\d+)@\d+$/.exec(key)?.[1]);
      expect(answers.map((m) => stepOf(m.key)).sort((a, b) => a - b)).toEqual(
        Array.from({ length: final.steps }, (_, i) => i + 1),
      );
      const sayingOf = (m: (typeof answers)[number]) =>
        JSON.stringify(
          m.message.content.map((part) => (part.type === 'tool-call' ? { ...part, toolCallId: '' } : part)),
        );
      expect(new Set(answers.map(sayingOf)).size).toBe(answers.length);
      // Every call has exactly one result, and every result answers a call.
      const callIds = answers.flatMap((m) =>
        m.message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])),
      );
      expect(new Set(callIds).size).toBe(callIds.length);
      const resultsPerCall = new Map<string, number>();
      for (const m of messages) {
        if (m.message.role !== 'tool') continue;
        for (const part of m.message.content)
          resultsPerCall.set(part.toolCallId, (resultsPerCall.get(part.toolCallId) ?? 0) + 1);
      }
      for (const id of callIds) expect(resultsPerCall.get(id), `results of ${id}`).toBe(1);
      expect([...resultsPerCall.keys()].sort()).toEqual([...callIds].sort());
      // The resumed execution wrote its answers under its own keys.
      expect(messages.some((m) => m.key.endsWith('@2'))).toBe(true);
    } finally {
      await store.close();
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
