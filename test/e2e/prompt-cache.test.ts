/**
 * Issue 27 §4: the request prefix stays byte-identical from step to step when nothing compacts in
 * between, a todo-write included (the task list goes after the transcript, not into the system
 * prompt); the cache the provider reports shows in `stats` and in stream-json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import {
  type OpenAITestServer,
  type RecordedRequest,
  startOpenAITestServer,
} from '../support/openai-test-server';

/** The OpenAI provider reads both of the simulated cache's fields (reads and writes). */
const MODEL = 'openai:test-model';

const turns = () => [
  {
    toolCalls: [
      {
        name: 'todo-write',
        args: { todos: [{ content: 'read the notes', status: 'in_progress' }, { content: 'sum them up' }] },
      },
      { name: 'file-read', args: { path: 'notes.txt' } },
    ],
  },
  {
    toolCalls: [
      {
        name: 'todo-write',
        args: {
          merge: true,
          todos: [
            { id: 'task-1', status: 'completed' },
            { id: 'task-2', status: 'in_progress' },
          ],
        },
      },
      { name: 'file-read', args: { path: 'notes.txt' } },
    ],
  },
  { text: 'Both notes read.', toolCalls: [{ name: 'file-read', args: { path: 'notes.txt' } }] },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'summed up' } }] },
];

/** The serialized messages of a request body as sent: the bytes between `"messages":[` and its `]`. */
function messageBytes(request: RecordedRequest): string[] {
  return (request.body.messages ?? []).map((message) => {
    const bytes = JSON.stringify(message);
    // What was parsed re-serializes to the bytes that were sent (the SDK sends JSON.stringify output).
    expect(request.raw).toContain(bytes);
    return bytes;
  });
}

describe('prompt caching', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer({ promptCache: {} });
  });
  afterAll(async () => server?.close());

  it('keeps the prefix byte-identical across steps and todo-writes, and reports the cache', async () => {
    const t = goalTestEnv('prompt-cache', { OPENAI_API_KEY: 'sk-test-cache' });
    fs.writeFileSync(path.join(t.workspace, 'notes.txt'), 'one\ntwo\n');
    const before = server.requests.length;
    server.enqueue(...turns());
    const result = await runCli(
      goalArgs('run', 'sum up the notes', t, server, ['--output-format', 'stream-json'], MODEL),
      t.env,
    );
    expect(result.code, result.stderr).toBe(0);
    const requests = server.requests.slice(before);
    expect(requests).toHaveLength(4);

    const system = requests.map((request) => JSON.stringify(request.body.messages?.[0]));
    const tools = requests.map((request) => JSON.stringify(request.body.tools));
    expect(new Set(system).size).toBe(1);
    expect(new Set(tools).size).toBe(1);
    expect(system[0]).not.toContain('read the notes');

    const bytes = requests.map(messageBytes);
    for (let step = 1; step < requests.length; step++) {
      const previous = bytes[step - 1];
      const current = bytes[step];
      // Steps 2 on carry the task list as their last message; everything before it is the previous
      // request's prefix, byte for byte, though a todo-write changed the list in between.
      const prefix = step === 1 ? previous : previous.slice(0, -1);
      expect(current.slice(0, prefix.length)).toEqual(prefix);
      expect(current.length).toBeGreaterThan(prefix.length);
    }
    const tails = requests.slice(1).map((request) => JSON.stringify(request.body.messages?.at(-1)));
    expect(tails[0]).toContain('[>] task-1');
    expect(tails[1]).toContain('[x] task-1');
    expect(tails[1]).toContain('[>] task-2');

    // The simulated cache read every earlier prefix back: steps 2 to 4 each hit.
    const cached = server.cacheUsage.slice(before).map((usage) => usage.cachedTokens);
    expect(cached[0]).toBe(0);
    for (const hit of cached.slice(1)) expect(hit).toBeGreaterThan(0);

    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const usage = events.filter((event) => event.type === 'usage');
    expect(usage.map((event) => event.cache_read_tokens)).toEqual(cached);
    expect(usage[1].cache_read_share).toBeGreaterThan(0);
    const end = events.find((event) => event.type === 'result');
    const read = cached.reduce((sum, n) => sum + n, 0);
    expect(end.usage.cache_read_tokens).toBe(read);
    expect(end.usage.cache_read_share).toBeCloseTo(read / end.usage.input_tokens, 3);

    const stats = await runCli(['stats', end.session_id, '--json'], t.env);
    expect(stats.code, stats.stderr).toBe(0);
    const report = JSON.parse(stats.stdout).cache;
    expect(report).toMatchObject({ readTokens: read, belowMinimum: false });
    expect(report.readShare).toBeGreaterThan(0);
    const shown = await runCli(['stats', end.session_id], t.env);
    expect(shown.stdout).toMatch(/prompt cache: +\d+\.\d% of input read from the cache/);
  });
});
