/**
 * Issue 19, MCP over Streamable HTTP: a server the test starts answers only requests with the right
 * `Authorization` header, which the config builds from `${MCP_HEADER_VALUE}` in the tool host's
 * environment. The call works, and the header's value is nowhere else: not in the workflow's history
 * (every payload decoded), not in the store (pg_dump), not in the worker's log or the CLI's output.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import { fetchHistory } from '../support/history';
import { startHttpMcpServer, type TestHttpMcpServer } from '../support/mcp';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { pgDump } from '../support/pg-dump';
import { toolResultsOf } from '../support/tool-results';

// A name without KEY or TOKEN in it: only goalrun's handling of MCP headers keeps it out, not the
// redaction of secret-looking variables.
const HEADER_VALUE = 'hv-3f1c9a7e5b2d4c6a8e0f1a2b3c4d5e6f';

/** Every payload of a workflow's history, decoded to text. */
function historyText(events: Array<{ event: unknown }>): string {
  const parts: string[] = [];
  const walk = (value: unknown) => {
    if (value instanceof Uint8Array) {
      parts.push(Buffer.from(value).toString('utf8'));
      return;
    }
    if (value === null || typeof value !== 'object') {
      if (typeof value === 'string') parts.push(value);
      return;
    }
    for (const child of Object.values(value)) walk(child);
  };
  for (const { event } of events) walk(event);
  return parts.join('\n');
}

describe('an MCP server over Streamable HTTP with a header from the environment', () => {
  let model: OpenAITestServer;
  let mcp: TestHttpMcpServer;

  beforeAll(async () => {
    model = await startOpenAITestServer();
    mcp = await startHttpMcpServer(HEADER_VALUE);
  });
  afterAll(async () => {
    await model?.close();
    await mcp?.close();
  });

  it('reaches the server with the header, and keeps its value out of history, store and logs', async () => {
    const t = goalTestEnv('mcp-http', { MCP_HEADER_VALUE: HEADER_VALUE });
    fs.writeFileSync(
      path.join(t.home, 'config.json'),
      JSON.stringify({
        mcp_servers: {
          corp: {
            type: 'http',
            url: mcp.url,
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own ${VAR} syntax
            headers: { Authorization: 'Bearer ${MCP_HEADER_VALUE}' },
          },
        },
      }),
    );
    const before = model.requests.length;
    model.enqueue(
      { toolCalls: [{ name: 'mcp__corp__whoami', args: { greeting: 'good morning' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'asked the corp server' } }] },
    );
    const result = await runCli(
      goalArgs('run', 'ask the corp server who we are', t, model, ['--json']),
      t.env,
      180_000,
    );
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status.status).toBe('completed');
    // The server saw the header, built from the environment.
    expect(mcp.requests.length).toBeGreaterThan(0);
    expect(mcp.requests.every((headers) => headers.authorization === `Bearer ${HEADER_VALUE}`)).toBe(true);
    const requests = model.requests.slice(before);
    expect(JSON.stringify(requests[0].body.tools)).toContain('mcp__corp__whoami');

    const store = await testStore(t.databaseUrl);
    try {
      const results = await toolResultsOf(store, status.sessionId);
      expect(results[0]).toMatchObject({ toolName: 'mcp__corp__whoami', ok: true });
      expect(results[0].text).toContain('good morning: authorized as the goalrun test client');
    } finally {
      await store.close();
    }

    const history = historyText(await fetchHistory(t.temporalAddress, status.workflowId));
    // The history was decoded: the goal's objective is in it, the header's value is not.
    expect(history).toContain('ask the corp server who we are');
    expect(history).not.toContain(HEADER_VALUE);
    const dump = pgDump(t.databaseUrl);
    expect(dump).toContain('good morning: authorized as the goalrun test client');
    expect(dump).not.toContain(HEADER_VALUE);
    const log = fs.readFileSync(path.join(t.home, 'logs', 'worker.log'), 'utf8');
    expect(log).toContain('mcp__corp__whoami');
    expect(log).not.toContain(HEADER_VALUE);
    expect(result.stdout + result.stderr).not.toContain(HEADER_VALUE);
  }, 240_000);
});
