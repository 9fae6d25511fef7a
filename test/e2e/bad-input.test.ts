/** Acceptance 9: bad input gets exit code 2 and one clear line; malformed tool arguments reach the model. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';

function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0];
}

describe('bad input', () => {
  // No Temporal server is needed for any of these: the checks run before anything starts.
  const t = goalTestEnv('badinput', { TEMPORAL_ADDRESS: '127.0.0.1:1' });

  it('rejects an unknown provider', async () => {
    const result = await runCli(['run', 'x', '--workspace', t.workspace, '--model', 'gpt:4o'], t.env);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toMatch(/invalid model "gpt:4o": unknown provider "gpt"/);
  });

  it('rejects a mistyped app command or model before anything is sent', async () => {
    // Checked before the goal is even looked up: no server answers at this address.
    const steered = await runCli(['steer', 'some-session', '/model opnai:gpt-4o'], t.env);
    expect(steered.code).toBe(2);
    expect(oneLine(steered.stderr)).toMatch(/invalid model "opnai:gpt-4o": unknown provider "opnai"/);
    const model = await runCli(['model', 'some-session', 'opnai:gpt-4o'], t.env);
    expect(model.code).toBe(2);
    expect(oneLine(model.stderr)).toMatch(/unknown provider "opnai"/);
    const unknown = await runCli(['steer', 'some-session', '/paws'], t.env);
    expect(unknown.code).toBe(2);
    expect(oneLine(unknown.stderr)).toMatch(/unknown command "\/paws"; known commands: \/compact, \/pause/);
  });

  it('rejects a too long objective, saying where a long brief goes', async () => {
    const result = await runCli(
      ['run', 'x'.repeat(12_001), '--workspace', t.workspace, '--model', 'gpt:4o'],
      t.env,
    );
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toMatch(
      /the objective has 12001 characters; at most 12000 .* in a file in the workspace/,
    );
  });

  it('rejects a missing API key', async () => {
    const result = await runCli(['run', 'x', '--workspace', t.workspace, '--model', 'openai:gpt-4o'], t.env);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toMatch(/OPENAI_API_KEY is not set/);
  });

  it('rejects a missing workspace', async () => {
    const missing = path.join(t.workspace, 'nope');
    const result = await runCli(['run', 'x', '--workspace', missing, '--model', 'openai:gpt-4o'], t.env);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toBe(`goalrun: workspace ${missing} does not exist`);
  });

  it('rejects a malformed config file, naming it', async () => {
    const home = path.join(t.home, 'bad-config');
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(path.join(home, 'config.json'), '{"max_steps": 10,');
    const result = await runCli(['run', 'x', '--workspace', t.workspace], { ...t.env, GOALRUN_HOME: home });
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toMatch(/config file .*config\.json is not valid JSON/);
    fs.writeFileSync(path.join(home, 'config.json'), '{"max_step": 10}');
    const typo = await runCli(['status', 'x'], { ...t.env, GOALRUN_HOME: home });
    expect(typo.code).toBe(2);
    expect(oneLine(typo.stderr)).toMatch(/config file .*config\.json is invalid: .*max_step/);
  });

  it('refuses a base URL with credentials, from the flag or the config, before anything starts', async () => {
    // A real Temporal server this time: a goal that started would be listed as waiting for a worker.
    const g = goalTestEnv('credurl');
    const objective = `credentials in the base url ${process.pid}`;
    const flag = await runCli(
      ['start', objective, '--workspace', g.workspace, '--model', 'openai:gpt-4o'].concat([
        '--base-url',
        'http://user:hunter2-secret@127.0.0.1:1/v1',
        '--json',
      ]),
      g.env,
    );
    expect(flag.code).toBe(2);
    expect(oneLine(flag.stderr)).toBe(
      'goalrun: --base-url carries credentials (user:password@); put the key in OPENAI_API_KEY instead: the base URL is stored with the goal and shown in logs',
    );
    expect(flag.stdout).toBe('');
    fs.writeFileSync(
      path.join(g.home, 'config.json'),
      `${JSON.stringify({ base_url: 'https://me:hunter2-secret@llm.example/v1' })}\n`,
    );
    const config = await runCli(
      ['run', objective, '--workspace', g.workspace, '--model', 'openai:gpt-4o', '--json'],
      { ...g.env, OPENAI_API_KEY: 'sk-test' },
    );
    expect(config.code).toBe(2);
    expect(oneLine(config.stderr)).toMatch(
      /^goalrun: config base_url carries credentials \(user:password@\)/,
    );
    for (const result of [flag, config]) expect(result.stderr).not.toContain('hunter2-secret');
    const listed = await runCli(['list', '--json'], g.env);
    expect(listed.code, listed.stderr).toBe(0);
    const goals = JSON.parse(listed.stdout) as Array<{ objective: string }>;
    expect(goals.filter((goal) => goal.objective === objective)).toEqual([]);
  });

  it('rejects bad flags with exit code 2', async () => {
    const result = await runCli(['run', 'x', '--max-steps', 'many'], t.env);
    expect(result.code).toBe(2);
    expect(oneLine(result.stderr)).toBe('goalrun: --max-steps must be a positive whole number, got "many"');
    const unknown = await runCli(['run', 'x', '--frobnicate'], t.env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown option '--frobnicate'/);
  });

  it('rejects a worker memory budget that is no size, from the flag or the environment', async () => {
    const flag = await runCli(['worker', '--max-memory', 'lots'], t.env);
    expect(flag.code).toBe(2);
    expect(oneLine(flag.stderr)).toMatch(/--max-memory "lots" is not a size: give it as 2G, 1536M or 2GiB/);
    // `run` hosts a worker too: the environment's budget is checked before anything starts.
    const env = { ...t.env, OPENAI_API_KEY: 'sk-test', GOALRUN_WORKER_MAX_MEMORY: '10M' };
    const run = await runCli(['run', 'x', '--workspace', t.workspace, '--model', 'openai:gpt-4o'], env);
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toMatch(
      /GOALRUN_WORKER_MAX_MEMORY 10M is too small: a worker needs at least \d+M/,
    );
  });

  it('shows malformed tool-call arguments to the model as an error, and the run goes on', async () => {
    const g = goalTestEnv('badargs');
    const model = scriptedModel(g.home, [
      { toolCalls: [{ name: 'bash', argsRaw: '{"command": "echo hi"' }] },
      { toolCalls: [{ name: 'file-write', args: { path: 42 } }] },
      { toolCalls: [{ name: 'no-such-tool', args: {} }] },
      { toolCalls: [{ name: 'finish', args: { status: 'done' } }] },
      { toolCalls: [{ name: 'bash', args: { command: 'echo recovered' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'recovered from bad calls' } }] },
    ]);
    const result = await runCli(
      ['run', 'survive bad calls', '--workspace', g.workspace, '--model', model, '--json'],
      g.env,
    );
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({ status: 'completed', steps: 6 });
    const store = await testStore(g.databaseUrl);
    const results = (await store.listMessages(status.sessionId))
      .filter((m) => m.message.role === 'tool')
      .map((m) => (m.message.content[0] as { output: { type: string; value: string } }).output);
    await store.close();
    expect(results[0].type).toBe('error-text');
    expect(results[0].value).toMatch(/^invalid arguments for bash: not valid JSON/);
    expect(results[1].value).toMatch(/^invalid arguments for file-write: .*path.*content/s);
    expect(results[2].value).toBe('unknown tool "no-such-tool"');
    expect(results[3].value).toMatch(
      /^invalid arguments for finish: status: expected "complete" or "blocked"/,
    );
    expect(results[4]).toMatchObject({ type: 'text' });
    expect(results[4].value).toContain('recovered');
  });
});
