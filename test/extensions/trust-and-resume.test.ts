/**
 * Issue 19: a repository must not start processes on a worker by being cloned. Its `.mcp.json` and
 * `.goalrun/hooks.json` are used only with `--trust-project-mcp`. And the workspace context is
 * gathered again on resume: a changed AGENTS.md applies from the resumed execution on, with a notice.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import { ensureServerEverything, showServerToSandbox } from '../support/mcp';
import {
  type ChatRequestBody,
  type OpenAITestServer,
  startOpenAITestServer,
} from '../support/openai-test-server';

function systemOf(body: ChatRequestBody): string {
  const system = body.messages?.find((message) => message.role === 'system');
  return typeof system?.content === 'string' ? system.content : '';
}

describe('project MCP servers and hooks need trust; a resume reads the workspace again', () => {
  let model: OpenAITestServer;
  let entry: string;
  let prefix: string;
  beforeAll(async () => {
    ({ entry, prefix } = await ensureServerEverything());
    model = await startOpenAITestServer();
  }, 300_000);
  afterAll(async () => model?.close());

  const run = (workspace: string, env: NodeJS.ProcessEnv, extra: string[] = []) =>
    runCli(goalArgs('run', 'look around', { workspace }, model, ['--json', ...extra]), env, 180_000);

  it("starts nothing of a repository's own without --trust-project-mcp, and both with it", async () => {
    const t = goalTestEnv('trust');
    showServerToSandbox(t.home, prefix);
    fs.writeFileSync(
      path.join(t.workspace, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          project: { command: 'bash', args: ['-c', `touch mcp-started; exec node ${entry} stdio`] },
        },
      }),
    );
    fs.mkdirSync(path.join(t.workspace, '.goalrun'));
    fs.writeFileSync(
      path.join(t.workspace, '.goalrun', 'hooks.json'),
      JSON.stringify({ hooks: { pre_tool: [{ command: 'cat > /dev/null; touch hook-ran' }] } }),
    );
    const turns = () => [
      { toolCalls: [{ name: 'glob', args: { pattern: '*' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'looked' } }] },
    ];
    let before = model.requests.length;
    model.enqueue(...turns());
    const untrusted = await run(t.workspace, t.env);
    expect(untrusted.code, untrusted.stderr).toBe(0);
    expect(fs.existsSync(path.join(t.workspace, 'mcp-started'))).toBe(false);
    expect(fs.existsSync(path.join(t.workspace, 'hook-ran'))).toBe(false);
    expect(JSON.stringify(model.requests[before].body.tools)).not.toContain('mcp__project__');

    before = model.requests.length;
    model.enqueue(...turns());
    const trusted = await run(t.workspace, t.env, ['--trust-project-mcp']);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(fs.existsSync(path.join(t.workspace, 'mcp-started'))).toBe(true);
    expect(fs.existsSync(path.join(t.workspace, 'hook-ran'))).toBe(true);
    expect(JSON.stringify(model.requests[before].body.tools)).toContain('mcp__project__echo');
  }, 300_000);

  it('reads AGENTS.md again on resume and says that it changed', async () => {
    const t = goalTestEnv('resume-rules');
    fs.writeFileSync(path.join(t.workspace, 'AGENTS.md'), 'RULE-OLD: use tabs.\n');
    let before = model.requests.length;
    model.enqueue({ toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'first' } }] });
    const first = await run(t.workspace, t.env);
    expect(first.code, first.stderr).toBe(0);
    const { sessionId } = JSON.parse(first.stdout);
    expect(systemOf(model.requests[before].body)).toContain('RULE-OLD');

    fs.writeFileSync(path.join(t.workspace, 'AGENTS.md'), 'RULE-NEW: use spaces.\n');
    before = model.requests.length;
    model.enqueue({ toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'second' } }] });
    const resumed = await runCli(['resume', sessionId, '--message', 'once more', '--json'], t.env, 180_000);
    expect(resumed.code, resumed.stderr).toBe(0);
    const system = systemOf(model.requests[before].body);
    expect(system).toContain('RULE-NEW');
    expect(system).not.toContain('RULE-OLD');
    const store = await testStore(t.databaseUrl);
    try {
      const notices = (await store.listEvents(sessionId))
        .filter((event) => event.kind === 'notice')
        .map((event) => (event.data as { text: string }).text);
      expect(notices.join('\n')).toMatch(/project instructions changed since execution 1/);
      expect((await store.latestWorkspaceContext(sessionId))?.execution).toBe(2);
    } finally {
      await store.close();
    }
  }, 300_000);
});
