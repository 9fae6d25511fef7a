/**
 * Issue 16 §6–7, the small ones, through the CLI as a user meets them. Each fails on the code of before:
 * - `start -` reads the objective from stdin (it took "-" as the objective);
 * - `goalrun worker` logs no `No workflows registered` warning;
 * - `policy` prints `compacts down to: N tokens` (no space after the colon before);
 * - the limit notice in the stream names `goalrun limits <id>` (it said "waiting for /limits");
 * - `resume` does not replay the earlier run's lines (paused, limit reached, …) first;
 * - the sandbox's private /tmp of a goal is removed when the goal ends;
 * - `doctor` no longer says the embedded store is "one process at a time".
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { goalArgs, statusOf } from '../support/goal-steps';
import {
  type OpenAITestServer,
  promptText,
  requestStep,
  startOpenAITestServer,
} from '../support/openai-test-server';

/** Where the sandbox keeps a session's private /tmp on this host (activities/sandbox/host.ts). */
function sandboxDirOf(sessionId: string): string {
  return path.join(os.tmpdir(), `goalrun-sandbox-${process.getuid?.() ?? 0}`, sessionId);
}

describe('the small fixes of issue 16', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('stdin objective, policy spacing, CLI notices, resume without replay, private /tmp removed', async () => {
    const t = goalTestEnv('small-fixes');
    const objective = `small-fixes-${randomUUID().slice(0, 8)} from stdin`;
    server.setFallback((body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      const step = requestStep(body);
      if (step === 1)
        return { toolCalls: [{ name: 'bash', args: { command: 'echo private > /tmp/marker.txt' } }] };
      if (step < 3) return { toolCalls: [{ name: 'bash', args: { command: 'cat /tmp/marker.txt' } }] };
      return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done from stdin' } }] };
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const started = await runCli(
        goalArgs('start', '-', t, server, ['--max-steps', '2', '--json']),
        t.env,
        120_000,
        {
          stdin: `${objective}\n`,
        },
      );
      const sessionId = expectJson(started).sessionId as string;
      await waitFor(
        'the goal to wait at its limit',
        async () => (await statusOf(t, sessionId)).status === 'limit_reached',
        240_000,
        500,
      );
      const status = await statusOf(t, sessionId);
      expect(status.objective).toBe(objective);
      expect(fs.existsSync(path.join(sandboxDirOf(sessionId), 'tmp', 'marker.txt'))).toBe(true);

      const policy = await runCli(['policy', sessionId], t.env);
      expect(policy.stdout).toMatch(/compacts down to: \d+ tokens/);

      const stream = await runCli(
        ['watch', sessionId, '--output-format', 'stream-json', '--from-start'],
        t.env,
        120_000,
      );
      expect(stream.stdout).toContain(`waiting for goalrun limits ${sessionId} --max-steps N`);

      expect((await runCli(['cancel', sessionId, '--wait'], t.env, 120_000)).code).toBe(0);
      await killAndWait(worker, 'SIGTERM');
      expect(worker.output()).toContain('polling task queue');
      expect(worker.output()).not.toContain('No workflows registered');

      // Resumed in the foreground: only what the new execution does is shown.
      const resumed = await runCli(['resume', sessionId, '--max-steps', '5'], t.env, 240_000);
      expect(resumed.code, `${resumed.stdout}\n${resumed.stderr}`).toBe(0);
      const lines = resumed.stdout.split('\n').filter((line) => line.startsWith('  '));
      expect(lines.join('\n')).not.toContain('limit reached');
      expect(lines.join('\n')).not.toMatch(/step 1 ·/);
      expect(resumed.stdout).toContain('goal completed');
      await waitFor(
        'the private /tmp to be removed',
        () => !fs.existsSync(sandboxDirOf(sessionId)),
        60_000,
        250,
      );
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 600_000);

  it('doctor describes the embedded store as shared', async () => {
    const t = goalTestEnv('small-fixes-doctor', { DATABASE_URL: undefined });
    const result = await runCli(['doctor'], { ...t.env, TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH });
    expect(result.stdout).toContain('shared by every goalrun process');
    expect(result.stdout).not.toContain('one process at a time');
  }, 120_000);
});
