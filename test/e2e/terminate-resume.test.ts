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
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { pairingProblems } from '../support/compaction-model';
import { goalTestEnv, testStore } from '../support/goal-env';
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
    const model = 'openai-compatible:test-model';
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
      const started = await runCli(
        [
          'start',
          'write and wait',
          '--workspace',
          t.workspace,
          '--model',
          model,
          '--base-url',
          server.url,
          '--json',
        ],
        t.env,
      );
      expect(started.code, started.stderr).toBe(0);
      const { sessionId, workflowId } = JSON.parse(started.stdout);
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
      const calls = messages.flatMap((m) => (m.message.role === 'assistant' ? m.message.content : []));
      const callIds = calls
        .filter((p) => p.type === 'tool-call')
        .map((p) => (p as { toolCallId: string }).toolCallId);
      const resultIds = messages.flatMap((m) =>
        m.message.role === 'tool' ? m.message.content.map((p) => p.toolCallId) : [],
      );
      expect(resultIds.sort()).toEqual([...callIds].sort());
      // The resumed execution wrote its answers under its own keys.
      expect(messages.some((m) => m.key.endsWith('@2'))).toBe(true);
    } finally {
      await store.close();
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
