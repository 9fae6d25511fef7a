/**
 * Issue 27 §1 acceptance, over HTTP against the provider test server: a model that calls `finish`
 * complete while `npm test` fails is kept going, told why (with the spool reference of the output),
 * and ends blocked after the failed-finish limit; with the test passing, the goal is completed and
 * `verified: true` in status --json, stream-json's result and list. A check that times out fails,
 * and a project's `.goalrun/config.json` adds checks to the user's.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { goalArgs, statusOf } from '../support/goal-steps';
import {
  type ChatRequestBody,
  type OpenAITestServer,
  promptText,
  requestStep,
  startOpenAITestServer,
} from '../support/openai-test-server';

/** A workspace whose `npm test` passes only once fixed.txt exists. */
function writeProject(workspace: string): void {
  fs.writeFileSync(
    path.join(workspace, 'package.json'),
    JSON.stringify({
      name: 'verify-fixture',
      version: '1.0.0',
      scripts: { test: 'node check.js' },
    }),
  );
  fs.writeFileSync(
    path.join(workspace, 'check.js'),
    "const fs = require('fs');\nif (!fs.existsSync('fixed.txt')) { console.error('TEST-FAILURE: fixed.txt is missing'); process.exit(1); }\nconsole.log('all tests pass');\n",
  );
}

const PARTS = ['make npm test pass'];
const finishComplete = (summary: string, parts: string[] | null = PARTS) => ({
  toolCalls: [
    { name: 'finish', args: { status: 'complete', summary, ...(parts ? { objective_parts: parts } : {}) } },
  ],
});

describe('verified completion', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('a finish while npm test fails is refused, told why, and blocked after 3 tries', async () => {
    const t = goalTestEnv('verify-fail');
    writeProject(t.workspace);
    const objective = `verify-fail-${randomUUID().slice(0, 8)}`;
    const bodies: ChatRequestBody[] = [];
    server.setFallback((body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      bodies.push(body);
      return finishComplete(`claimed done at step ${requestStep(body)}`);
    });
    const result = await runCli(
      goalArgs('run', objective, t, server, ['--verify', 'npm test', '--json']),
      t.env,
      300_000,
    );
    expect(result.code, `${result.stdout}\n${result.stderr}`).not.toBe(0);
    // Three finishes, each refused: the model saw the failure and its output after the first two.
    expect(bodies.length).toBe(3);
    const seen = promptText(bodies[1]);
    expect(seen).toContain('the goal is not finished: its checks did not pass (failed finish 1 of 3');
    expect(seen).toContain('TEST-FAILURE: fixed.txt is missing');
    expect(seen).toMatch(/FAILED: npm test \(exit 1\) spool:\d+/);

    const status = await statusOf(t, JSON.parse(result.stdout).sessionId);
    expect(status.status).toBe('blocked');
    expect(status.verified).toBe(false);
    expect(status.reason).toContain('checks failed at 3 finishes: npm test (exit 1');
    expect(status.checks).toHaveLength(1);
    expect(status.checks[0]).toMatchObject({ command: 'npm test', exitCode: 1, ok: false });
    expect(status.checks[0].spool).toMatch(/^spool:\d+$/);
    expect(status.checks[0].tail).toContain('TEST-FAILURE');
  }, 400_000);

  it('with npm test passing the goal is completed and verified, in status, stream-json and list', async () => {
    const t = goalTestEnv('verify-pass');
    writeProject(t.workspace);
    const objective = `verify-pass-${randomUUID().slice(0, 8)}`;
    const bodies: ChatRequestBody[] = [];
    server.setFallback((body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      bodies.push(body);
      const step = requestStep(body);
      // A premature claim first: refused, then fixed, then claimed again.
      // A claim that names no part of the objective is refused before anything runs.
      if (step === 1) return finishComplete('no parts named', null);
      if (step === 2) return finishComplete('too early', ['fix it', 'make npm test pass']);
      if (step === 3) return { toolCalls: [{ name: 'bash', args: { command: 'echo ok > fixed.txt' } }] };
      // A claim that leaves out a part named before narrows the objective: asked again.
      if (step === 4) return finishComplete('fixed', ['Fix  it']);
      return finishComplete('fixed and tested', ['make npm test pass', 'fix it']);
    });
    const result = await runCli(
      goalArgs('run', objective, t, server, [
        '--verify',
        'npm test',
        '--verify',
        'test -f package.json',
        '--output-format',
        'stream-json',
      ]),
      t.env,
      300_000,
    );
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const final = events.at(-1);
    expect(final).toMatchObject({ type: 'result', status: 'completed', verified: true });
    expect(
      final.checks.map((check: { command: string; exit_code: number }) => [check.command, check.exit_code]),
    ).toEqual([
      ['npm test', 0],
      ['test -f package.json', 0],
    ]);
    // The refused first claim shows in the stream as the checks' notice.
    expect(
      events.some((event) => event.type === 'notice' && event.text.startsWith('checks failed at finish')),
    ).toBe(true);

    expect(bodies).toHaveLength(5);
    expect(promptText(bodies[1])).toContain('objective_parts: required');
    const narrowed = promptText(bodies[4]);
    expect(narrowed).toContain('this finish narrows the objective');
    expect(narrowed).toContain('This finish leaves out: make npm test pass');
    const status = await statusOf(t, final.session_id);
    expect(status).toMatchObject({
      status: 'completed',
      verified: true,
      claimedParts: ['make npm test pass', 'fix it'],
    });
    expect(status.checks.map((check: { exitCode: number }) => check.exitCode)).toEqual([0, 0]);
    const text = await runCli(['status', final.session_id], t.env);
    expect(text.stdout).toContain('verified   yes: every check passed');
    expect(text.stdout).toContain('claims     make npm test pass; fix it');
    const listed = JSON.parse((await runCli(['list', '--json'], t.env)).stdout);
    const row = listed.find((view: { sessionId: string }) => view.sessionId === final.session_id);
    expect(row.verified).toBe(true);
    // The list prints each goal's short id (the end of its session id) first.
    const list = await runCli(['list'], t.env);
    expect(list.stdout).toMatch(new RegExp(`${row.shortId}\\s+completed verified`));
  }, 400_000);

  it('without checks a completed goal is not verified; a project adds checks, a timeout fails closed', async () => {
    const t = goalTestEnv('verify-none');
    const objective = `verify-none-${randomUUID().slice(0, 8)}`;
    server.setFallback((body) =>
      promptText(body).includes(objective) ? finishComplete('done') : { text: 'not mine' },
    );
    const plain = await runCli(goalArgs('run', objective, t, server, ['--json']), t.env, 300_000);
    expect(plain.code, plain.stderr).toBe(0);
    const unverified = await statusOf(t, JSON.parse(plain.stdout).sessionId);
    expect(unverified).toMatchObject({ status: 'completed', verified: false, checks: [] });

    // The project's file (which the model can write) adds a check that never ends: it times out and fails.
    const project = goalTestEnv('verify-project');
    fs.mkdirSync(path.join(project.workspace, '.goalrun'));
    fs.writeFileSync(
      path.join(project.workspace, '.goalrun', 'config.json'),
      JSON.stringify({ verify: ['sleep 30'], verify_max_failures: 1, verify_timeout_s: 2 }),
    );
    fs.writeFileSync(path.join(project.home, 'config.json'), JSON.stringify({ verify: ['true'] }));
    const projectObjective = `verify-project-${randomUUID().slice(0, 8)}`;
    server.setFallback((body) =>
      promptText(body).includes(projectObjective) ? finishComplete('done') : { text: 'not mine' },
    );
    const timed = await runCli(
      goalArgs('run', projectObjective, project, server, ['--json']),
      project.env,
      300_000,
    );
    expect(timed.stderr).toContain('applied verify +"sleep 30"');
    const blocked = await statusOf(project, JSON.parse(timed.stdout).sessionId);
    expect(blocked.status).toBe('blocked');
    expect(blocked.verified).toBe(false);
    expect(blocked.checks).toEqual([
      expect.objectContaining({ command: 'true', exitCode: 0, ok: true }),
      expect.objectContaining({
        command: 'sleep 30',
        exitCode: null,
        ok: false,
        problem: 'timed out after 2 s',
      }),
    ]);
  }, 400_000);

  it('a sign-off waits in awaiting_user with the evidence; deny sends it back, approve completes it', async () => {
    const t = goalTestEnv('verify-sign-off');
    const objective = `verify-sign-off-${randomUUID().slice(0, 8)}`;
    const bodies: ChatRequestBody[] = [];
    server.setFallback((body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      bodies.push(body);
      return finishComplete(`the page is blue (claim ${requestStep(body)})`);
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const started = await runCli(
        goalArgs('start', objective, t, server, [
          '--verify',
          'true',
          '--sign-off',
          'the page looks right',
          '--json',
        ]),
        t.env,
      );
      expect(started.code, started.stderr).toBe(0);
      const { sessionId } = JSON.parse(started.stdout);
      const awaiting = () =>
        waitFor('the goal to await a sign-off', async () => {
          const shown = await statusOf(t, sessionId);
          return shown.status === 'awaiting_user' ? shown : undefined;
        });
      const first = await awaiting();
      expect(first.approval.command).toBe('sign-off: the page looks right');
      expect(first.approval.justification).toContain('the model says: the page is blue (claim 1)');
      expect(first.approval.justification).toContain('passed: true (exit 0)');
      expect(first.verified).toBe(false);

      const denied = await runCli(['deny', sessionId, '--reason', 'the page is red'], t.env);
      expect(denied.code, denied.stderr).toBe(0);
      const second = await awaiting();
      expect(second.approval.justification).toContain('(claim 2)');
      expect(promptText(bodies[1])).toContain('did not sign it off: the page is red');

      const approved = await runCli(['approve', sessionId], t.env);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toContain('signed off: the goal is completed');
      const done = await waitFor('the goal to complete', async () => {
        const shown = await statusOf(t, sessionId);
        return shown.status === 'completed' ? shown : undefined;
      });
      expect(done.verified).toBe(true);
      expect(bodies).toHaveLength(2);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 400_000);
});
