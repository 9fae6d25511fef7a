/**
 * Issue 16 §5: a worker keeps its word on shutdown. It prints that running tools get 30 s to finish;
 * before, SIGTERM killed a `sleep 3` 43 ms into it, and Temporal ran the command again elsewhere.
 * Here SIGTERM arrives during a command that runs until the test releases it: the worker waits for
 * it, the command finishes, its result is recorded, and the next worker goes on from there without
 * running it again.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import {
  type OpenAITestServer,
  promptText,
  requestStep,
  startOpenAITestServer,
} from '../support/openai-test-server';

describe('worker shutdown', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lets a running command finish on SIGTERM, records it, and never runs it again', async () => {
    const t = goalTestEnv('worker-shutdown');
    const objective = `worker-shutdown-${randomUUID().slice(0, 8)}`;
    const log = path.join(t.workspace, 'runs.log');
    server.setFallback((body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      if (requestStep(body) === 1) {
        return {
          toolCalls: [
            {
              name: 'bash',
              // Runs until the test releases it (or 10 minutes pass).
              args: {
                command:
                  'echo started >> runs.log; for i in $(seq 1 3000); do [ -e release ] && break; sleep 0.2; done; echo finished >> runs.log',
              },
            },
          ],
        };
      }
      return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'slept once' } }] };
    });
    const first = spawnCli(['worker'], t.env);
    let second: ReturnType<typeof spawnCli> | null = null;
    try {
      const started = await runCli(goalArgs('start', objective, t, server, ['--json']), t.env);
      const sessionId = expectJson(started).sessionId as string;
      await waitFor(
        'the command to start',
        () => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('started'),
        180_000,
        50,
      );
      const exited = new Promise<number | null>((resolve) => first.once('exit', (code) => resolve(code)));
      first.kill('SIGTERM');
      // The worker is stopping, and waits for the command instead of killing it: it is still there
      // while the command runs, however long the machine takes; the command ends when released.
      await waitFor('the worker to stop polling', () => /STOPPING/.test(first.output()), 60_000, 100);
      expect(first.exitCode).toBeNull();
      expect(fs.readFileSync(log, 'utf8')).toBe('started\n');
      fs.writeFileSync(path.join(t.workspace, 'release'), '');
      await exited;
      expect(fs.readFileSync(log, 'utf8')).toBe('started\nfinished\n');
      expect(first.output()).not.toContain('command killed');

      second = spawnCli(['worker'], t.env);
      const done = expectJson(await runCli(['watch', sessionId, '--json'], t.env, 300_000));
      expect(done.status).toBe('completed');
      // Recorded once, run once: the next worker went on to the next step.
      expect(fs.readFileSync(log, 'utf8')).toBe('started\nfinished\n');
    } finally {
      await killAndWait(first, 'SIGKILL');
      if (second) await killAndWait(second, 'SIGTERM');
    }
  }, 600_000);
});
