/**
 * Issue 19, hooks: run on the tool host in the goal's sandbox, with a JSON event on stdin. A pre_tool
 * hook that denies `rm -rf` keeps the command from running and the model reads its reason; a stop
 * hook keeps the goal going once; notify hears `waiting_approval` and `completed`, each with the
 * command that moves the goal on. Every hook run is an event in the store.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { toolResultsOf } from '../support/tool-results';

const DENY_RM = [
  'input=$(cat)',
  'if printf "%s" "$input" | grep -q "rm -rf"; then',
  '  echo "rm -rf is not allowed in this repository; delete files one by one" >&2',
  '  exit 2',
  'fi',
].join('\n');
const STOP_ONCE = [
  'cat >/dev/null',
  'if [ -e .stop-hook-ran ]; then exit 0; fi',
  'touch .stop-hook-ran',
  'echo "run the test suite before you finish" >&2',
  'exit 2',
].join('\n');
const NOTIFY = 'cat >> notify.jsonl && echo >> notify.jsonl';

describe('hooks', () => {
  let model: OpenAITestServer;
  beforeAll(async () => {
    model = await startOpenAITestServer();
  });
  afterAll(async () => model?.close());

  it('pre_tool denies rm -rf, stop keeps the goal going once, notify hears waiting_approval and completed', async () => {
    const t = goalTestEnv('hooks');
    fs.writeFileSync(
      path.join(t.home, 'config.json'),
      JSON.stringify({
        hooks: {
          pre_tool: [{ command: DENY_RM, matcher: '^bash$' }],
          stop: [{ command: STOP_ONCE }],
          notify: [{ command: NOTIFY }],
        },
      }),
    );
    fs.mkdirSync(path.join(t.workspace, 'victim'));
    fs.writeFileSync(path.join(t.workspace, 'victim', 'keep.txt'), 'keep me\n');
    const before = model.requests.length;
    model.enqueue(
      { toolCalls: [{ name: 'bash', args: { command: 'rm -rf victim' } }] },
      {
        toolCalls: [
          {
            name: 'bash',
            args: {
              command: 'echo outside > approved.txt',
              sandbox_permissions: 'require_escalated',
              justification: 'to test approvals',
            },
          },
        ],
      },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'first try' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'tests ran' } }] },
    );
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startGoal(t, model, 'clean up', ['--approval', 'on-request']);
      await waitFor(
        'the goal to wait for approval',
        async () =>
          JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout).status ===
            'waiting_approval' || undefined,
        120_000,
        300,
      );
      const approved = await runCli(['approve', sessionId], t.env);
      expect(approved.code, approved.stderr).toBe(0);
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
      expect(watched.code, watched.stderr).toBe(0);
      const final = JSON.parse(watched.stdout);
      expect(final).toMatchObject({ status: 'completed', steps: 4, finishSummary: 'tests ran' });

      // The veto is a notice in the event stream too.
      const stream = await runCli(
        ['watch', sessionId, '--from-start', '--output-format', 'stream-json'],
        t.env,
      );
      expect(stream.stdout).toContain(
        'pre_tool hook said no to bash: rm -rf is not allowed in this repository',
      );
      // pre_tool: the command never ran, and the model read why.
      expect(fs.existsSync(path.join(t.workspace, 'victim', 'keep.txt'))).toBe(true);
      const requests = model.requests.slice(before);
      expect(JSON.stringify(requests[1].body.messages)).toContain(
        'rm -rf is not allowed in this repository; delete files one by one',
      );
      // stop: the first finish was turned back with the hook's words.
      expect(JSON.stringify(requests[3].body.messages)).toContain('run the test suite before you finish');
      expect(fs.readFileSync(path.join(t.workspace, 'approved.txt'), 'utf8')).toBe('outside\n');

      // notify: one line per status that needs a person, with the command that moves the goal on.
      const notified = fs
        .readFileSync(path.join(t.workspace, 'notify.jsonl'), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line));
      expect(notified.map((event) => event.status)).toEqual(['waiting_approval', 'completed']);
      expect(notified[0]).toMatchObject({
        event: 'notify',
        session_id: sessionId,
        resume_command: `goalrun approve ${sessionId}`,
        approval: {
          command: 'echo outside > approved.txt',
          deny_command: `goalrun deny ${sessionId} --reason "…"`,
        },
      });
      expect(notified[1]).toMatchObject({
        status: 'completed',
        resume_command: `goalrun resume ${sessionId} --message "…"`,
        steps: 4,
      });

      const store = await testStore(t.databaseUrl);
      try {
        const results = await toolResultsOf(store, sessionId);
        expect(results[0]).toMatchObject({ toolName: 'bash', ok: false });
        expect(results[0].text).toMatch(/^\[denied by a pre_tool hook; the call did not run\]/);
        expect(results[2]).toMatchObject({ toolName: 'finish', ok: false });
        const hooks = (await store.listEvents(sessionId))
          .filter((event) => event.kind === 'hook')
          .map((event) => event.data as { event: string; outcome: string });
        expect(hooks).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ event: 'pre_tool', outcome: 'veto' }),
            expect.objectContaining({ event: 'pre_tool', outcome: 'ok' }),
            expect.objectContaining({ event: 'stop', outcome: 'veto' }),
            expect.objectContaining({ event: 'stop', outcome: 'ok' }),
            expect.objectContaining({ event: 'notify', outcome: 'ok' }),
          ]),
        );
      } finally {
        await store.close();
      }
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);
});
