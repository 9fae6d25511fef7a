/**
 * Issue 8, acceptance 4: durable approvals. A `bash` call with `sandbox_permissions:
 * "require_escalated"` asks to run one command outside the sandbox. With `--approval on-request`
 * the goal waits in `waiting_approval` (status shows the command and the justification), survives
 * a SIGKILLed worker, and `goalrun approve` runs the command unsandboxed: it reaches a host server
 * and writes outside the workspace, both of which the sandbox forbids. `goalrun deny --reason`
 * hands the reason to the model; config `sandbox.approval_timeout_minutes: 1` denies an unanswered
 * request; `never` (the default) denies at once. Every decision is an `approval` event in the store.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionStore } from '../../store/types';
import { killAndWait, runCli, scriptedModel, spawnCli, tempDir, waitFor } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { toolResultsOf } from '../support/tool-results';

const JUSTIFICATION = 'the integration server runs on the host, outside the sandbox';

// Under /var/tmp, not /tmp: the sandbox's private /tmp must not be why a write there is unseen.
const outside = fs.mkdtempSync('/var/tmp/goalrun-approval-outside-');

describe('approvals of commands outside the sandbox', () => {
  const t = goalTestEnv('approval');
  let store: SessionStore;
  let model: OpenAITestServer;
  let host: net.Server;
  let port = 0;
  const received: string[] = [];
  let worker: ReturnType<typeof spawnCli>;

  beforeAll(async () => {
    store = await testStore(t.databaseUrl);
    model = await startOpenAITestServer();
    host = net.createServer((socket) => {
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        received.push(chunk.trim());
        socket.end(`host answers ${chunk.trim()}\n`);
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    port = (host.address() as net.AddressInfo).port;
    worker = spawnCli(['worker'], t.env);
  });

  afterAll(async () => {
    if (worker) await killAndWait(worker, 'SIGTERM');
    await store?.close();
    await model?.close();
    await new Promise<void>((resolve) => host.close(() => resolve()));
    fs.rmSync(outside, { recursive: true, force: true });
  });

  /** A bash call that asks to leave the sandbox. */
  const escalate = (command: string) => ({
    toolCalls: [
      {
        name: 'bash',
        args: { command, sandbox_permissions: 'require_escalated', justification: JUSTIFICATION },
      },
    ],
  });
  const finish = { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };

  async function status(sessionId: string, env = t.env) {
    const shown = await runCli(['status', sessionId, '--json'], env);
    expect(shown.code, shown.stderr).toBe(0);
    return JSON.parse(shown.stdout);
  }

  async function start(args: string[], env = t.env): Promise<string> {
    const started = await runCli(
      ['start', 'reach the host', '--workspace', t.workspace, '--json', ...args],
      env,
    );
    expect(started.code, started.stderr).toBe(0);
    return JSON.parse(started.stdout).sessionId;
  }

  const ended = (sessionId: string, env = t.env) =>
    waitFor(
      'the goal to end',
      async () => {
        const shown = await status(sessionId, env);
        return shown.status === 'completed' || shown.status === 'failed' ? shown : undefined;
      },
      150_000,
      500,
    );

  async function approvalEvents(sessionId: string) {
    const events = await store.listEvents(sessionId);
    return {
      requested: events.filter((event) => event.kind === 'approval-requested').map((event) => event.data),
      decided: events.filter((event) => event.kind === 'approval').map((event) => event.data),
    };
  }

  it('waits in waiting_approval across a worker restart; approve runs the command unsandboxed', async () => {
    const marker = path.join(outside, 'approved.txt');
    const command = `echo written-outside > ${marker} && exec 3<>/dev/tcp/127.0.0.1/${port} && echo escalated >&3 && cat <&3`;
    const scripted = scriptedModel(t.home, [escalate(command), finish]);
    const sessionId = await start(['--model', scripted, '--approval', 'on-request']);

    const waiting = await waitFor('the goal to wait for approval', async () => {
      const shown = await status(sessionId);
      return shown.status === 'waiting_approval' ? shown : undefined;
    });
    expect(waiting.approval).toMatchObject({ command, justification: JUSTIFICATION });
    const text = await runCli(['status', sessionId], t.env);
    expect(text.stdout).toContain(`approval   waiting: ${command}`);
    expect(text.stdout).toContain(`because: ${JUSTIFICATION}`);
    expect((await approvalEvents(sessionId)).requested).toEqual([
      expect.objectContaining({ command, justification: JUSTIFICATION }),
    ]);

    // The wait holds no worker: kill it, and the store still says what the goal waits for.
    await killAndWait(worker, 'SIGKILL');
    const offline = await status(sessionId);
    expect(offline.status).toBe('waiting_approval');
    expect(offline.approval).toMatchObject({ command, justification: JUSTIFICATION });
    worker = spawnCli(['worker'], t.env);
    const again = await waitFor('the new worker to answer', async () => {
      const shown = await status(sessionId);
      return shown.status === 'waiting_approval' && shown.approval ? shown : undefined;
    });
    expect(again.approval.command).toBe(command);
    // Nothing ran while it waited.
    expect(fs.existsSync(marker)).toBe(false);
    expect(received).not.toContain('escalated');

    // `watch` says what waits, why, and how to answer.
    const watcher = spawnCli(['watch', sessionId], t.env);
    const watched = new Promise<number | null>((resolve) => watcher.once('exit', (code) => resolve(code)));
    await waitFor('watch to show the request', () => watcher.output().includes(`because: ${JUSTIFICATION}`));
    expect(watcher.output()).toContain(`approval   waiting: ${command}`);
    expect(watcher.output()).toContain(`goalrun approve ${sessionId}`);

    const approved = await runCli(['approve', sessionId], t.env);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain('approved');
    const final = await ended(sessionId);
    expect(final.status).toBe('completed');
    expect(await watched).toBe(0);
    expect(watcher.output().match(/because: /g)).toHaveLength(1);

    // It ran outside the sandbox: it wrote outside the workspace and reached the host's loopback.
    expect(fs.readFileSync(marker, 'utf8')).toBe('written-outside\n');
    expect(received).toContain('escalated');
    const [bash] = await toolResultsOf(store, sessionId);
    expect(bash).toMatchObject({ toolName: 'bash', ok: true });
    expect(bash.text).toContain('host answers escalated');
    const { decided } = await approvalEvents(sessionId);
    expect(decided).toEqual([expect.objectContaining({ command, decision: 'approved' })]);
    // A second answer finds nothing waiting.
    const late = await runCli(['deny', sessionId], t.env);
    expect(late.code).not.toBe(0);
  });

  it('deny --reason runs nothing and hands the reason to the model', async () => {
    const command = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo denied-command >&3`;
    model.enqueue({ text: 'I need the host.', ...escalate(command) }, finish);
    const before = model.requests.length;
    const sessionId = await start([
      '--model',
      'openai-compatible:test-model',
      '--base-url',
      model.url,
      '--approval',
      'on-request',
    ]);
    await waitFor('the goal to wait for approval', async () => {
      const shown = await status(sessionId);
      return shown.status === 'waiting_approval' ? shown : undefined;
    });
    const reason = 'use the mock server in the workspace instead';
    const denied = await runCli(['deny', sessionId, '--reason', reason], t.env);
    expect(denied.code, denied.stderr).toBe(0);
    expect(denied.stdout).toContain('denied');
    expect((await ended(sessionId)).status).toBe('completed');

    expect(received).not.toContain('denied-command');
    const [bash] = await toolResultsOf(store, sessionId);
    expect(bash.ok).toBe(false);
    expect(bash.text).toContain(reason);
    // The model's next request carries the denial and its reason as the bash call's result.
    const next = model.requests[before + 1].body.messages ?? [];
    const toolMessage = next.find((message) => message.role === 'tool');
    expect(JSON.stringify(toolMessage?.content)).toContain(`denied by `);
    expect(JSON.stringify(toolMessage?.content)).toContain(reason);
    const { decided } = await approvalEvents(sessionId);
    expect(decided).toEqual([expect.objectContaining({ command, decision: 'denied', reason })]);
  });

  it('an answer while no worker runs says so instead of hanging; the goal gets it once one does', async () => {
    const command = `echo offline > ${path.join(outside, 'offline.txt')}`;
    const sessionId = await start([
      '--model',
      scriptedModel(t.home, [escalate(command), finish]),
      '--approval',
      'on-request',
    ]);
    await waitFor('the goal to wait for approval', async () => {
      const shown = await status(sessionId);
      return shown.status === 'waiting_approval' ? shown : undefined;
    });
    await killAndWait(worker, 'SIGKILL');
    const reason = 'answered while the worker was down';
    const offline = await runCli(['deny', sessionId, '--reason', reason], t.env);
    expect(offline.code).toBe(2);
    expect(offline.stderr).toMatch(/no worker (took the answer within 30 s|is polling task queue)/);
    expect(offline.stderr).toContain('answer again once a worker runs');

    worker = spawnCli(['worker'], t.env);
    const restarted = Date.now();
    // Temporal keeps an update it accepted for a goal with no worker: it usually arrives now, but it
    // may be dropped, and then the person answers again, as the message said.
    let answeredAgain = false;
    await waitFor(
      'the goal to end',
      async () => {
        const shown = await status(sessionId);
        if (shown.status === 'completed') return true;
        if (shown.status === 'waiting_approval' && !answeredAgain && Date.now() - restarted > 20_000) {
          answeredAgain = true;
          expect((await runCli(['deny', sessionId, '--reason', reason], t.env)).code).toBe(0);
        }
        return undefined;
      },
      120_000,
      1_000,
    );
    const [bash] = await toolResultsOf(store, sessionId);
    expect(bash.text).toContain(reason);
    expect(fs.existsSync(path.join(outside, 'offline.txt'))).toBe(false);
    const { decided } = await approvalEvents(sessionId);
    expect(decided).toEqual([expect.objectContaining({ decision: 'denied', reason })]);
  });

  it('cancel while waiting runs nothing and leaves no request pending', async () => {
    const command = `echo cancelled > ${path.join(outside, 'cancelled.txt')}`;
    const scripted = scriptedModel(t.home, [escalate(command), finish]);
    const sessionId = await start(['--model', scripted, '--approval', 'on-request']);
    await waitFor('the goal to wait for approval', async () => {
      const shown = await status(sessionId);
      return shown.status === 'waiting_approval' ? shown : undefined;
    });
    const cancelled = await runCli(['cancel', sessionId, '--wait'], t.env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const final = await waitFor('the goal to be cancelled', async () => {
      const shown = await status(sessionId);
      return shown.status === 'cancelled' ? shown : undefined;
    });
    expect(final.approval).toBeNull();
    expect((await runCli(['status', sessionId], t.env)).stdout).not.toContain('approval   waiting');
    expect(fs.existsSync(path.join(outside, 'cancelled.txt'))).toBe(false);
    const [bash] = await toolResultsOf(store, sessionId);
    expect(bash.ok).toBe(false);
    expect(bash.text).toContain('not run to completion: the goal was cancelled');
    const checkpoint = await store.latestCheckpoint(sessionId);
    expect(checkpoint?.goalState).toMatchObject({ status: 'cancelled', approval: null });
    const { decided } = await approvalEvents(sessionId);
    expect(decided).toEqual([expect.objectContaining({ command, decision: 'denied', by: 'cancel' })]);
  });

  it('denies a request nobody answers within config approval_timeout_minutes', async () => {
    // Its own data dir with a config: the policy and the timeout both come from config.json.
    const home = tempDir('approval-config-home');
    fs.writeFileSync(
      path.join(home, 'config.json'),
      `${JSON.stringify({ sandbox: { approval: 'on-request', approval_timeout_minutes: 1 } })}\n`,
    );
    const env = { ...t.env, GOALRUN_HOME: home };
    const command = `echo timed-out > ${path.join(outside, 'timeout.txt')}`;
    const sessionId = await start(['--model', scriptedModel(home, [escalate(command), finish])], env);
    const waiting = await waitFor('the goal to wait for approval', async () => {
      const shown = await status(sessionId, env);
      return shown.status === 'waiting_approval' ? shown : undefined;
    });
    expect(waiting.approval.deadlineMs - waiting.approval.requestedAtMs).toBe(60_000);

    expect((await ended(sessionId, env)).status).toBe('completed');
    expect(fs.existsSync(path.join(outside, 'timeout.txt'))).toBe(false);
    const [bash] = await toolResultsOf(store, sessionId);
    expect(bash.ok).toBe(false);
    expect(bash.text).toMatch(/denied by timeout: no answer within 1 minute$/);
    const { decided } = await approvalEvents(sessionId);
    expect(decided).toEqual([expect.objectContaining({ decision: 'denied', by: 'timeout' })]);
  });

  it('with approval never (the default) denies at once and tells the model why', async () => {
    const command = `echo never > ${path.join(outside, 'never.txt')}`;
    const result = await runCli(
      [
        'run',
        'reach the host',
        '--workspace',
        t.workspace,
        '--model',
        scriptedModel(t.home, [escalate(command), finish]),
        '--json',
      ],
      t.env,
    );
    expect(result.code, result.stderr).toBe(0);
    const { sessionId, status: final } = JSON.parse(result.stdout);
    expect(final).toBe('completed');
    expect(fs.existsSync(path.join(outside, 'never.txt'))).toBe(false);
    const [bash] = await toolResultsOf(store, sessionId);
    expect(bash.ok).toBe(false);
    expect(bash.text).toContain('sandbox.approval is "never"');
    const { requested, decided } = await approvalEvents(sessionId);
    expect(requested).toEqual([]);
    expect(decided).toEqual([expect.objectContaining({ command, decision: 'denied', by: 'policy' })]);
  });
});
