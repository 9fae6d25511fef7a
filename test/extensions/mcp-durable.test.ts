/**
 * Issue 19, MCP calls are durable like every tool call: each is a tool activity whose result is
 * stored under the call's id. A worker SIGKILLed during a call: after a restart, the call that had
 * completed is not run again and the one cut short is run again (the server, started anew, sees it
 * twice). Cancelling the goal during a long call sends MCP's `notifications/cancelled` to the server.
 * A wrapper records every line the server receives on its stdin, in the workspace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAndWait, runCli, spawnCli, tempDir, waitFor } from '../support/cli';
import { type GoalTestEnv, goalTestEnv, testStore } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { ensureServerEverything, showServerToSandbox } from '../support/mcp';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { toolResultsOf } from '../support/tool-results';

/** The long-running tool, as the model calls it and as the server names it. */
const LONG = 'mcp__everything__trigger-long-running-operation';
const SERVER_LONG = 'trigger-long-running-operation';

/** The JSON-RPC messages the server received (its stdin, as the wrapper recorded it). */
function received(
  workspace: string,
): Array<{ method?: string; params?: { name?: string; requestId?: unknown } }> {
  const file = path.join(workspace, 'mcp-in.log');
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

function calls(workspace: string, tool: string): number {
  return received(workspace).filter(
    (message) => message.method === 'tools/call' && message.params?.name === tool,
  ).length;
}

describe('durable MCP calls', () => {
  let model: OpenAITestServer;
  let entry: string;
  let prefix: string;

  beforeAll(async () => {
    ({ entry, prefix } = await ensureServerEverything());
    model = await startOpenAITestServer();
  }, 300_000);
  afterAll(async () => model?.close());

  /** A test env whose MCP config starts the reference server behind a recorder of its stdin. */
  function setup(name: string): { t: GoalTestEnv; mcpConfig: string } {
    const t = goalTestEnv(name);
    showServerToSandbox(t.home, prefix);
    const mcpConfig = path.join(tempDir(`${name}-config`), 'mcp.json');
    fs.writeFileSync(
      mcpConfig,
      JSON.stringify({
        mcpServers: {
          everything: { command: 'bash', args: ['-c', `tee -a mcp-in.log | exec node ${entry} stdio`] },
        },
      }),
    );
    return { t, mcpConfig };
  }

  /** Starts the goal whose model calls the everything server configured in `mcpConfig`. */
  const startWithServer = (t: GoalTestEnv, mcpConfig: string) =>
    startGoal(t, model, 'use the everything server', ['--mcp-config', mcpConfig]);

  it('after a SIGKILLed worker, runs the interrupted call again and the completed one never', async () => {
    const { t, mcpConfig } = setup('mcp-kill');
    model.enqueue(
      { toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'before the crash' } }] },
      { toolCalls: [{ name: LONG, args: { duration: 6, steps: 6 } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'survived' } }] },
    );
    let worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startWithServer(t, mcpConfig);
      await waitFor(
        'the long call to reach the server',
        () => calls(t.workspace, SERVER_LONG) === 1 || undefined,
        120_000,
        200,
      );
      expect(calls(t.workspace, 'echo')).toBe(1);
      await killAndWait(worker, 'SIGKILL');
      worker = spawnCli(['worker'], t.env);
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 180_000);
      expect(watched.code, watched.stderr).toBe(0);
      expect(JSON.parse(watched.stdout).status).toBe('completed');
      // The completed call was not run again; the interrupted one was, on a server started anew.
      expect(calls(t.workspace, 'echo')).toBe(1);
      expect(calls(t.workspace, SERVER_LONG)).toBe(2);
      const store = await testStore(t.databaseUrl);
      try {
        const results = await toolResultsOf(store, sessionId);
        expect(results.filter((result) => result.toolName === 'mcp__everything__echo')).toHaveLength(1);
        const long = results.find((result) => result.toolName === LONG);
        expect(long?.text).toMatch(/attempt 2: an earlier attempt of this call was interrupted/);
        expect(long?.text).toContain('Long running operation completed');
      } finally {
        await store.close();
      }
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);

  it('cancelling the goal sends the cancel notification for the running call', async () => {
    const { t, mcpConfig } = setup('mcp-cancel');
    model.enqueue({ toolCalls: [{ name: LONG, args: { duration: 300, steps: 300 } }] });
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId } = await startWithServer(t, mcpConfig);
      await waitFor(
        'the long call to reach the server',
        async () => calls(t.workspace, SERVER_LONG) === 1 || undefined,
        120_000,
        200,
      );
      const cancelled = await runCli(['cancel', sessionId], t.env);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      await waitFor('the goal to be cancelled', async () => {
        const shown = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
        return shown.status === 'cancelled' || undefined;
      });
      const messages = received(t.workspace);
      const call = messages.find(
        (message) => message.method === 'tools/call' && message.params?.name === SERVER_LONG,
      ) as { id?: unknown } | undefined;
      const cancel = messages.find((message) => message.method === 'notifications/cancelled');
      expect(cancel, JSON.stringify(messages.map((message) => message.method))).toBeDefined();
      expect(cancel?.params?.requestId).toBe(call?.id);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);
});
