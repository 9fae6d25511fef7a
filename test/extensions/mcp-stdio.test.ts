/**
 * Issue 19, MCP over stdio: the official reference server `@modelcontextprotocol/server-everything`
 * (installed from the npm registry) runs inside the goal's sandbox, its tools reach the model as
 * `mcp__everything__<tool>` with their schemas, and its `echo` and `get-sum` give the right answers
 * through goalrun over HTTP to the provider test server. Its `get-env` shows the environment the
 * sandbox gave it: the configured `env`, none of the worker's secrets.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import { ensureServerEverything, showServerToSandbox } from '../support/mcp';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { toolResultsOf } from '../support/tool-results';

const PROVIDER_KEY = 'sk-test-provider-key-never-in-a-tool-1234567890';
const OTHER_SECRET = 'ghp_worker-only-token-not-for-mcp-0987654321';

describe('an MCP server over stdio in the sandbox', () => {
  let model: OpenAITestServer;
  let entry: string;
  let prefix: string;

  beforeAll(async () => {
    ({ entry, prefix } = await ensureServerEverything());
    model = await startOpenAITestServer();
  }, 300_000);
  afterAll(async () => model?.close());

  it('calls echo and get-sum with the right answers; get-env shows no secret of the worker', async () => {
    const t = goalTestEnv('mcp-stdio', { OPENAI_API_KEY: PROVIDER_KEY, WORKER_GITHUB_TOKEN: OTHER_SECRET });
    // The server's install lies in the hidden home: the sandbox is told to show it.
    showServerToSandbox(t.home, prefix);
    const configDir = tempDir('mcp-config');
    const mcpConfig = path.join(configDir, 'mcp.json');
    // A user's file as Claude Code or Cursor has it, with a key goalrun does not know.
    fs.writeFileSync(
      mcpConfig,
      JSON.stringify({
        mcpServers: {
          everything: {
            command: 'node',
            args: [entry, 'stdio'],
            env: { MY_SETTING: 'visible-to-the-server' },
            disabled: false,
          },
        },
      }),
    );
    const before = model.requests.length;
    model.enqueue(
      { toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'hello through goalrun' } }] },
      { toolCalls: [{ name: 'mcp__everything__get-sum', args: { a: 19, b: 23 } }] },
      { toolCalls: [{ name: 'mcp__everything__get-env', args: {} }] },
      { toolCalls: [{ name: 'mcp__everything__get-tiny-image', args: {} }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'used the MCP server' } }] },
    );
    const result = await runCli(
      goalArgs('run', 'use the everything server', t, model, ['--mcp-config', mcpConfig, '--json']),
      t.env,
      240_000,
    );
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status.status).toBe('completed');
    const requests = model.requests.slice(before);
    expect(requests).toHaveLength(5);

    // The tools reach the model with their schemas, the same list in every request.
    const tools = requests[0].body.tools ?? [];
    const sum = tools.find((tool) => tool.function.name === 'mcp__everything__get-sum');
    expect(sum?.function.parameters).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
    });
    for (const request of requests) expect(JSON.stringify(request.body.tools)).toBe(JSON.stringify(tools));

    const store = await testStore(t.databaseUrl);
    try {
      const results = await toolResultsOf(store, status.sessionId);
      expect(results[0]).toMatchObject({ toolName: 'mcp__everything__echo', ok: true });
      expect(results[0].text).toContain('Echo: hello through goalrun');
      expect(results[1].text).toContain('The sum of 19 and 23 is 42.');
      const env = results[2].text;
      expect(env).toContain('visible-to-the-server');
      // Not even the names of the worker's secrets reach the server (redaction would hide only values).
      for (const name of [
        'OPENAI_API_KEY',
        'WORKER_GITHUB_TOKEN',
        'DATABASE_URL',
        'GOALRUN_HOME',
        'TEMPORAL_ADDRESS',
      ]) {
        expect(env).not.toContain(name);
      }
      expect(env).not.toContain(PROVIDER_KEY);
      expect(env).not.toContain(OTHER_SECRET);
      // The sandbox's home, not the worker's.
      expect(env).toContain('"HOME": "/tmp/home"');
      // The model saw the answers.
      expect(JSON.stringify(requests[2].body.messages)).toContain('The sum of 19 and 23 is 42.');
      // An image is a stub naming its spool copy, which holds the image's base64 whole.
      const image = results[3].text;
      const stub = /\[image image\/png, (\d+) bytes: not shown; its base64 is in spool:(\d+)/.exec(image);
      expect(stub, image).not.toBeNull();
      const page = await store.readSpool(status.sessionId, Number(stub?.[2]), 0, 1_000_000);
      expect(
        Buffer.from(page?.content ?? '', 'base64')
          .subarray(1, 4)
          .toString('latin1'),
      ).toBe('PNG');
    } finally {
      await store.close();
    }
  }, 300_000);
});
