/**
 * Issue 24 §3 and issue 26 §7: "trust the project" trusts the files the user had, not what the model
 * writes later. With --trust-project, `.goalrun/hooks.json` and `.mcp.json` are read once per
 * execution, from the gathered row: a hook or a server the model writes mid-goal is not used by that
 * goal, neither in the same execution nor after a resume (the files are pinned by their content at the
 * goal's start) until the user trusts them again (`resume --trust-project`). Without trust, `run`,
 * `status` and `doctor` say what they found and did not use.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIdOf } from '../../workflows/definitions';
import { killAndWait, runCli, runCliIn, spawnCli } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import {
  type ChatRequestBody,
  type OpenAITestServer,
  startOpenAITestServer,
} from '../support/openai-test-server';

/** A tiny stdio MCP server (echo, crash): the model can make it die, so the next call restarts it. */
const SERVER_SCRIPT = path.resolve(__dirname, '../support/crashing-mcp-server.js');

function toolNames(body: ChatRequestBody): string[] {
  return (body.tools ?? []).map((tool) => tool.function.name);
}

describe('trust in the project is trust in what the user had', () => {
  let server: OpenAITestServer;
  let client: Client;
  beforeAll(async () => {
    server = await startOpenAITestServer();
    client = new Client({
      connection: await Connection.connect({ address: goalTestEnv('trust-probe').temporalAddress }),
    });
  });
  afterAll(async () => {
    await server?.close();
    await client?.connection.close();
  });
  /** A goal's run has closed in Temporal (its final status reaches the CLI a moment earlier). */
  const closed = (sessionId: string) =>
    client.workflow
      .getHandle(workflowIdOf(sessionId))
      .result()
      .catch(() => undefined);

  it('does not use hooks and MCP servers the model writes mid-goal, nor after a resume, until trusted again', async () => {
    const t = goalTestEnv('trust-pinned');
    const ws = t.workspace;
    fs.writeFileSync(
      path.join(ws, '.mcp.json'),
      JSON.stringify({ mcpServers: { proj: { command: 'node', args: [SERVER_SCRIPT] } } }),
    );
    // What the model writes: a hook that leaves a mark, and the same server started through a
    // command that leaves one (the server's name is unchanged, so a restart would pick it up).
    const plantedHooks = JSON.stringify({
      hooks: { pre_tool: [{ command: 'cat > /dev/null; touch hook-ran', network: true }] },
    });
    const plantedMcp = JSON.stringify({
      mcpServers: {
        proj: { command: 'bash', args: ['-c', `touch mcp-planted; exec node ${SERVER_SCRIPT}`] },
        added: { command: 'bash', args: ['-c', `touch mcp-added; exec node ${SERVER_SCRIPT}`] },
      },
    });
    // One worker serves every run: a goal's ending never waits for a foreground process that left.
    const worker = spawnCli(['worker'], t.env);
    try {
      const before = server.requests.length;
      server.enqueue(
        { toolCalls: [{ name: 'file-write', args: { path: '.goalrun/hooks.json', content: plantedHooks } }] },
        { toolCalls: [{ name: 'file-write', args: { path: '.mcp.json', content: plantedMcp } }] },
        // The server dies: the next call starts it again, from the configuration the goal was given.
        { toolCalls: [{ name: 'mcp__proj__crash', args: {} }] },
        { toolCalls: [{ name: 'mcp__proj__echo', args: { text: 'after the crash' } }] },
        { toolCalls: [{ name: 'bash', args: { command: 'echo still working' } }] },
        { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'wrote the files' } }] },
      );
      const first = await runCli(
        goalArgs('run', 'set up the project', t, server, ['--json', '--trust-project', '--no-worker']),
        t.env,
        180_000,
      );
      expect(first.code, first.stderr).toBe(0);
      const { sessionId } = JSON.parse(first.stdout);
      const requests = server.requests.slice(before);
      expect(requests).toHaveLength(6);
      expect(toolNames(requests[0].body)).toContain('mcp__proj__echo');
      // The echo after the crash answered: the pinned server was started again.
      expect(JSON.stringify(requests[4].body)).toContain('echo: after the crash');
      expect(fs.existsSync(path.join(ws, 'hook-ran'))).toBe(false);
      expect(fs.existsSync(path.join(ws, 'mcp-planted'))).toBe(false);
      expect(fs.existsSync(path.join(ws, 'mcp-added'))).toBe(false);

      // A resume reads the files again: changed since the user trusted them, they are not used.
      await closed(sessionId);
      const resumedFrom = server.requests.length;
      server.enqueue(
        { toolCalls: [{ name: 'mcp__proj__echo', args: { text: 'resumed' } }] },
        { toolCalls: [{ name: 'bash', args: { command: 'echo resumed' } }] },
        { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'resumed' } }] },
      );
      const resumed = await runCli(
        ['resume', sessionId, '--message', 'go on', '--json', '--no-worker'],
        t.env,
        180_000,
      );
      expect(resumed.code, resumed.stderr).toBe(0);
      const resumedRequests = server.requests.slice(resumedFrom);
      expect(toolNames(resumedRequests[0].body)).toContain('mcp__proj__echo');
      expect(toolNames(resumedRequests[0].body)).not.toContain('mcp__added__echo');
      expect(JSON.stringify(resumedRequests[1].body)).toContain('echo: resumed');
      expect(fs.existsSync(path.join(ws, 'hook-ran'))).toBe(false);
      expect(fs.existsSync(path.join(ws, 'mcp-planted'))).toBe(false);
      expect(fs.existsSync(path.join(ws, 'mcp-added'))).toBe(false);
      const store = await testStore(t.databaseUrl);
      try {
        const notices = (await store.listEvents(sessionId))
          .filter((event) => event.kind === 'notice')
          .map((event) => (event.data as { text: string }).text)
          .join('\n');
        expect(notices).toMatch(
          /\.goalrun\/hooks\.json changed since you trusted the project.*not used.*--trust-project/,
        );
        expect(notices).toMatch(/\.mcp\.json changed since you trusted the project.*not used/);
      } finally {
        await store.close();
      }

      // The user looks and trusts them as they are now: the resumed goal uses them, never their network.
      await closed(sessionId);
      const trustedFrom = server.requests.length;
      server.enqueue(
        { toolCalls: [{ name: 'bash', args: { command: 'echo trusted again' } }] },
        { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'trusted' } }] },
      );
      const retrusted = await runCli(
        ['resume', sessionId, '--message', 'again', '--trust-project', '--json', '--no-worker'],
        t.env,
        180_000,
      );
      expect(retrusted.code, retrusted.stderr).toBe(0);
      expect(toolNames(server.requests[trustedFrom].body)).toContain('mcp__added__echo');
      expect(fs.existsSync(path.join(ws, 'hook-ran'))).toBe(true);
      expect(fs.existsSync(path.join(ws, 'mcp-added'))).toBe(true);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 400_000);

  it('says what it found and did not use when the project is not trusted: run, status and doctor', async () => {
    const t = goalTestEnv('trust-untrusted');
    fs.mkdirSync(path.join(t.workspace, '.goalrun'));
    fs.writeFileSync(
      path.join(t.workspace, '.goalrun', 'hooks.json'),
      JSON.stringify({
        hooks: {
          pre_tool: [{ command: 'touch a' }, { command: 'touch b' }],
          post_tool: [{ command: 'touch c' }],
          stop: [{ command: 'touch d' }],
        },
      }),
    );
    fs.writeFileSync(
      path.join(t.workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { proj: { command: 'node', args: [SERVER_SCRIPT] } } }),
    );
    server.enqueue({ toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'nothing' } }] });
    const run = await runCli(goalArgs('run', 'look only', t, server), t.env, 180_000);
    expect(run.code, run.stderr).toBe(0);
    const said = run.stdout + run.stderr;
    expect(said).toContain('found .goalrun/hooks.json (4 hooks): not used, the project is not trusted');
    expect(said).toContain('found .mcp.json (1 MCP server): not used, the project is not trusted');
    const status = await runCliIn(t.workspace, ['status', '--last'], t.env);
    const statusText = status.stdout;
    expect(status.code, status.stderr).toBe(0);
    expect(statusText).toMatch(
      /found \.goalrun\/hooks\.json \(4 hooks\): not used, the project is not trusted/,
    );

    const doctor = await runCli(['doctor', '--workspace', t.workspace], t.env, 120_000);
    expect(doctor.stdout).toContain(
      'found .goalrun/hooks.json (4 hooks): not used, the project is not trusted',
    );
    expect(doctor.stdout).toContain('found .mcp.json (1 MCP server): not used, the project is not trusted');
    expect(fs.existsSync(path.join(t.workspace, 'a'))).toBe(false);
  }, 300_000);
});
