/**
 * Issue 24 item 6, `stalled` set by the workflow: with stalled_after_minutes 1, a model call held open
 * by the test server (a gate the test opens, no sleep-and-hope) leaves the goal with no finished step;
 * the workflow's own timer marks it stalled, in its state and the GoalStatus search attribute, and the
 * notify hook hears it. When the held call answers, the step finishes and the goal runs again, to the end.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type OpenAITestServer, requestStep, startOpenAITestServer } from '../support/openai-test-server';

const NOTIFY = 'cat >> notify.jsonl && echo >> notify.jsonl';

describe('the stall watch', () => {
  let server: OpenAITestServer;
  let connection: Connection;
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  beforeAll(async () => {
    server = await startOpenAITestServer({
      fallback: async (body) => {
        if (requestStep(body) !== 1) {
          return {
            toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done after the stall' } }],
          };
        }
        // The first call is held until the test has seen the goal stalled; its step then finishes.
        await held;
        return { toolCalls: [{ name: 'bash', args: { command: 'echo slow but here' } }] };
      },
    });
  });
  afterAll(async () => {
    release();
    await server?.close();
    await connection?.close();
  });

  it('marks a goal without a finished step stalled, tells the notify hook, and sets it running after the step', {
    timeout: 300_000,
  }, async () => {
    const t = goalTestEnv('stall-watch', { OPENAI_API_KEY: 'sk-test' });
    fs.writeFileSync(
      path.join(t.home, 'config.json'),
      JSON.stringify({ stalled_after_minutes: 1, hooks: { notify: [{ command: NOTIFY }] } }),
    );
    connection = await Connection.connect({ address: t.temporalAddress });
    const client = new Client({ connection });
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId, workflowId } = await startGoal(t, server, 'wait for a slow model');
      const stalled = await waitFor(
        'the goal marked stalled',
        async () => {
          const view = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
          return view.status === 'stalled' ? view : undefined;
        },
        150_000,
        1_000,
      );
      expect(stalled.reason).toMatch(/^no step finished since 20\d\d-.*\(stalled_after_minutes 1\)/);
      // Step 1 has started (its number is counted when it starts) and not finished.
      expect(stalled.steps).toBe(1);
      const attribute = async () =>
        ((await client.workflow.getHandle(workflowId).describe()).searchAttributes.GoalStatus as string[])[0];
      expect(await attribute()).toBe('stalled');
      const heard = await waitFor(
        'the notify hook to hear stalled',
        async () => {
          const file = path.join(t.workspace, 'notify.jsonl');
          if (!fs.existsSync(file)) return undefined;
          const lines = fs
            .readFileSync(file, 'utf8')
            .split('\n')
            .filter((line) => line.trim() !== '');
          return lines.map((line) => JSON.parse(line)).find((event) => event.status === 'stalled');
        },
        60_000,
        500,
      );
      expect(heard).toMatchObject({ session_id: sessionId, resume_command: `goalrun status ${sessionId}` });

      release();
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 120_000);
      expect(watched.code, watched.stderr).toBe(0);
      expect(JSON.parse(watched.stdout)).toMatchObject({ status: 'completed', steps: 2 });
      expect(await attribute()).toBe('completed');
      const recent = JSON.parse(watched.stdout).recent.map((action: { text: string }) => action.text);
      expect(recent).toEqual(expect.arrayContaining(['a step finished; running again']));
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });
});
