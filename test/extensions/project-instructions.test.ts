/**
 * Issue 19, project instructions: `$GOALRUN_HOME/AGENTS.md` first, then `AGENTS.md` from the git root
 * down to the workspace, reach the system prompt of every request (read from the provider test
 * server's recorded requests), which stays byte-identical from step to step; a nested directory's
 * AGENTS.md reaches the model once, when it first works there; CLAUDE.md is read where no AGENTS.md
 * is; the 32 KiB cap is enforced with a notice naming what it cut.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import {
  type ChatRequestBody,
  type OpenAITestServer,
  startOpenAITestServer,
} from '../support/openai-test-server';

/** The system message of a recorded request. */
function systemOf(body: ChatRequestBody): string {
  const system = body.messages?.find((message) => message.role === 'system');
  return typeof system?.content === 'string' ? system.content : JSON.stringify(system?.content ?? '');
}

function countOf(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe('project instructions', () => {
  let model: OpenAITestServer;
  beforeAll(async () => {
    model = await startOpenAITestServer();
  });
  afterAll(async () => model?.close());

  const run = (workspace: string, env: NodeJS.ProcessEnv) =>
    runCli(goalArgs('run', 'follow the project rules', { workspace }, model, ['--json']), env, 180_000);

  it('puts the global and the root-to-workspace AGENTS.md in every request, a nested one when the model works there', async () => {
    const t = goalTestEnv('agents-md');
    // The git root is above the workspace: its AGENTS.md and the workspace's both apply, root first.
    const repo = t.workspace;
    execFileSync('git', ['init', '-q', repo]);
    const workspace = path.join(repo, 'service');
    fs.mkdirSync(path.join(workspace, 'lib', 'deep'), { recursive: true });
    fs.writeFileSync(path.join(t.home, 'AGENTS.md'), 'RULE-GLOBAL: answer in English.\n');
    fs.writeFileSync(path.join(repo, 'AGENTS.md'), 'RULE-ROOT: run `make test` before you finish.\n');
    fs.writeFileSync(path.join(workspace, 'AGENTS.md'), 'RULE-SERVICE: never touch the migrations.\n');
    fs.writeFileSync(path.join(workspace, 'lib', 'AGENTS.md'), 'RULE-NESTED: lib code has no I/O.\n');
    fs.writeFileSync(path.join(workspace, 'lib', 'deep', 'a.txt'), 'alpha\n');
    const before = model.requests.length;
    model.enqueue(
      { toolCalls: [{ name: 'file-read', args: { path: 'lib/deep/a.txt' } }] },
      { toolCalls: [{ name: 'file-read', args: { path: 'lib/deep/a.txt' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'read it twice' } }] },
    );
    const result = await run(workspace, t.env);
    expect(result.code, result.stderr).toBe(0);
    const requests = model.requests.slice(before);
    expect(requests).toHaveLength(3);
    const system = systemOf(requests[0].body);
    const order = ['RULE-GLOBAL', 'RULE-ROOT', 'RULE-SERVICE'].map((rule) => system.indexOf(rule));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(system).not.toContain('RULE-NESTED');
    // The stable prefix: the same system prompt and tools, byte for byte, in every request.
    for (const request of requests) {
      expect(systemOf(request.body)).toBe(system);
      expect(JSON.stringify(request.body.tools)).toBe(JSON.stringify(requests[0].body.tools));
    }
    // The nested file came with the first result from its directory, and only then.
    const second = JSON.stringify(requests[1].body.messages);
    const third = JSON.stringify(requests[2].body.messages);
    expect(countOf(second, 'RULE-NESTED')).toBe(1);
    expect(countOf(third, 'RULE-NESTED')).toBe(1);
    expect(second).toContain('lib/AGENTS.md');
  }, 240_000);

  it('reads CLAUDE.md where no AGENTS.md is, and cuts instructions over the cap with a notice', async () => {
    const t = goalTestEnv('claude-md');
    execFileSync('git', ['init', '-q', t.workspace]);
    const line = 'RULE-CLAUDE: keep functions short. '.repeat(20);
    // About 40 KiB, over the 32 KiB default cap.
    fs.writeFileSync(path.join(t.workspace, 'CLAUDE.md'), `${line}\n`.repeat(58));
    fs.mkdirSync(path.join(t.workspace, 'both'));
    fs.writeFileSync(path.join(t.workspace, 'both', 'AGENTS.md'), 'RULE-AGENTS-WINS\n');
    fs.writeFileSync(path.join(t.workspace, 'both', 'CLAUDE.md'), 'RULE-CLAUDE-LOSES\n');
    fs.writeFileSync(path.join(t.workspace, 'both', 'b.txt'), 'beta\n');
    const before = model.requests.length;
    model.enqueue(
      { toolCalls: [{ name: 'file-read', args: { path: 'both/b.txt' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] },
    );
    const result = await run(t.workspace, t.env);
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    const requests = model.requests.slice(before);
    const system = systemOf(requests[0].body);
    expect(system).toContain('RULE-CLAUDE: keep functions short.');
    expect(system).toContain('cut by goalrun');
    const instructionBytes = Buffer.byteLength(system.slice(system.indexOf('## CLAUDE.md')));
    expect(instructionBytes).toBeLessThan(33 * 1024);
    expect(instructionBytes).toBeGreaterThan(30 * 1024);
    // The first message's snapshot: `git status` as the tool host ran it in the sandbox.
    expect(JSON.stringify(requests[0].body.messages?.[1])).toMatch(/git: \\n {2}## No commits yet/);
    const second = JSON.stringify(requests[1].body.messages);
    expect(second).toContain('RULE-AGENTS-WINS');
    expect(second).not.toContain('RULE-CLAUDE-LOSES');
    // The notice names what was cut: in the event log and in status.
    const store = await testStore(t.databaseUrl);
    try {
      const notices = (await store.listEvents(status.sessionId))
        .filter((event) => event.kind === 'notice')
        .map((event) => (event.data as { text: string }).text);
      expect(notices.join('\n')).toMatch(/over their 32 KiB cap.*cut CLAUDE\.md \(\d+ of \d+ bytes shown\)/);
    } finally {
      await store.close();
    }
    expect(status.recent.map((action: { text: string }) => action.text).join('\n')).toMatch(/cut CLAUDE\.md/);
  }, 240_000);
});
