/** Acceptance 1: a scripted goal of several steps completes and its transcript is stored once, in order. */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionStore } from '../../store/types';
import { GoalIterationKey, GoalModelKey, GoalSessionKey, GoalStatusKey } from '../../workflows/definitions';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { activitySummary, fetchHistory } from '../support/history';

const turns = [
  {
    text: 'Writing the file.',
    toolCalls: [{ name: 'file-write', args: { path: 'notes/hello.txt', content: 'hello from goalrun\n' } }],
  },
  { toolCalls: [{ name: 'bash', args: { command: 'wc -c notes/hello.txt && echo ran-bash' } }] },
  { toolCalls: [{ name: 'file-read', args: { path: 'notes/hello.txt' } }] },
  { toolCalls: [{ name: 'grep', args: { pattern: 'goalrun', path: 'notes' } }] },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'wrote, ran, read back' } }] },
];

describe('a scripted goal', () => {
  const t = goalTestEnv('scripted');
  let store: SessionStore;
  afterAll(async () => store?.close());

  it('completes with exit code 0 and stores every message once, in order', async () => {
    const model = scriptedModel(t.home, turns);
    const result = await runCli(
      ['run', 'write a note, check it, read it back', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({
      status: 'completed',
      steps: 5,
      iteration: 1,
      noProgress: 0,
      reason: null,
    });
    for (const field of ['sessionId', 'workflowId', 'objective', 'model', 'elapsedMs'])
      expect(status).toHaveProperty(field);
    expect(status.usage.totalTokens).toBeGreaterThan(0);
    expect(status.usage.contextTokens).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(t.workspace, 'notes/hello.txt'), 'utf8')).toBe('hello from goalrun\n');

    store = await testStore(t.databaseUrl);
    const messages = await store.listMessages(status.sessionId);
    // initial message + 5 assistant messages + 5 tool results, nothing twice
    expect(messages.map((m) => m.message.role)).toEqual([
      'user',
      ...turns.flatMap(() => ['assistant', 'tool']),
    ]);
    expect(new Set(messages.map((m) => m.key)).size).toBe(messages.length);
    const seqs = messages.map((m) => m.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    const toolOutputs = messages
      .filter((m) => m.message.role === 'tool')
      .map((m) => JSON.stringify(m.message));
    expect(toolOutputs[1]).toContain('ran-bash');
    expect(toolOutputs[2]).toContain('hello from goalrun');
    // every tool call is answered by the result right after it
    for (let i = 1; i < messages.length; i += 2) {
      const call = messages[i].message.content.find((part) => part.type === 'tool-call') as {
        toolCallId: string;
      };
      const answer = messages[i + 1].message.content[0] as { toolCallId: string };
      expect(answer.toolCallId).toBe(call.toolCallId);
    }
    const session = await store.getSession(status.sessionId);
    expect(session).toMatchObject({ status: 'completed', projectDir: t.workspace });

    const shown = await runCli(['status', status.sessionId, '--json'], t.env);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      status: 'completed',
      steps: 5,
      sessionId: status.sessionId,
    });

    // What the Web UI shows: search attributes, the objective as summary, a summary per activity.
    const connection = await Connection.connect({ address: t.temporalAddress });
    try {
      const handle = new Client({ connection }).workflow.getHandle(status.workflowId);
      const description = await handle.describe();
      expect(description.typedSearchAttributes.get(GoalStatusKey)).toBe('completed');
      expect(description.typedSearchAttributes.get(GoalSessionKey)).toBe(status.sessionId);
      expect(description.typedSearchAttributes.get(GoalModelKey)).toBe(model);
      expect(description.typedSearchAttributes.get(GoalIterationKey)).toBe(1);
      expect(await description.staticSummary()).toBe('write a note, check it, read it back');
      const summaries = (await fetchHistory(t.temporalAddress, status.workflowId))
        .map(({ event }) => activitySummary(event))
        .filter(Boolean);
      expect(summaries).toContain(`model step 1 · ${model}`);
      expect(summaries).toContain('bash: wc -c notes/hello.txt && echo ran-bash');
      expect(summaries).toContain('file-write: notes/hello.txt');
    } finally {
      await connection.close();
    }
  });
});
