/**
 * Acceptance 4: SIGKILL the worker during a model step, and again during a bash call; a new worker
 * finishes the goal with no message stored twice and the step count of a fault-free run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { killAndWait, runCli, scriptedModel, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';

const turns = [
  { toolCalls: [{ name: 'file-write', args: { path: 'a.txt', content: 'one\n' } }] },
  // A slow model step: the worker is killed while it streams. Long, so that a loaded machine's polls
  // cannot miss it (the next worker answers it again, as slowly).
  { delayMs: 25_000, toolCalls: [{ name: 'bash', args: { command: 'echo two >> a.txt' } }] },
  { toolCalls: [{ name: 'file-read', args: { path: 'a.txt' } }] },
  // A slow tool: the worker is killed while it runs.
  { toolCalls: [{ name: 'bash', args: { command: 'touch started-4; sleep 6; echo three >> a.txt' } }] },
  { toolCalls: [{ name: 'file-read', args: { path: 'a.txt' } }] },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'survived two crashes' } }] },
];

describe('a worker killed mid-goal', () => {
  it('is replaced by a new worker that finishes the goal exactly once', async () => {
    const t = goalTestEnv('crash');
    const model = scriptedModel(t.home, turns);
    const started = await runCli(
      ['start', 'survive crashes', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(started.code, started.stderr).toBe(0);
    const { sessionId } = JSON.parse(started.stdout);
    const status = async () => JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);

    const first = spawnCli(['worker'], t.env);
    await waitFor('model step 2 to be under way', async () => (await status()).steps === 2, 60_000, 300);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await killAndWait(first, 'SIGKILL');

    const second = spawnCli(['worker'], t.env);
    const marker = path.join(t.workspace, 'started-4');
    await waitFor('the slow bash call to start', () => fs.existsSync(marker), 90_000, 200);
    await killAndWait(second, 'SIGKILL');

    const third = spawnCli(['worker'], t.env);
    try {
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 150_000);
      expect(watched.code, watched.stderr).toBe(0);
      const final = JSON.parse(watched.stdout);
      expect(final).toMatchObject({ status: 'completed', steps: turns.length, iteration: 1 });
    } finally {
      await killAndWait(third, 'SIGTERM');
    }
    // The killed bash ran twice (it is retried), but its result was stored once.
    expect(fs.readFileSync(path.join(t.workspace, 'a.txt'), 'utf8')).toMatch(/^one\ntwo\n(three\n)+$/);

    const store = await testStore(t.databaseUrl);
    const messages = await store.listMessages(sessionId);
    await store.close();
    expect(new Set(messages.map((m) => m.key)).size).toBe(messages.length);
    expect(messages.filter((m) => m.message.role === 'assistant')).toHaveLength(turns.length);
    expect(messages.filter((m) => m.message.role === 'tool')).toHaveLength(turns.length);
    expect(messages.map((m) => m.message.role)).toEqual([
      'user',
      ...turns.flatMap(() => ['assistant', 'tool']),
    ]);
  });
});
