/**
 * Issue 11 acceptance 5 and 6: `--output-format stream-json` prints only lines the event schema
 * accepts, in the exact order the goal did things, ending in a `result` that matches
 * `status --json` (its cost too, for a model with prices); `watch --from-start` replays it later and
 * `watch --after N` goes on after a cursor; `transcript --format jsonl` holds every stored message in
 * order, `--full` expands spooled outputs, and the transcript redacts the secrets the CLI knows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StreamEvent, streamEventSchema } from '../../core/stream-events';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

type ResultEvent = Extract<StreamEvent, { type: 'result' }>;

const turns = [
  {
    text: 'Planning first.',
    toolCalls: [{ name: 'todo-write', args: { todos: [{ content: 'write a.txt' }] } }],
  },
  { toolCalls: [{ name: 'file-write', args: { path: 'a.txt', content: 'hello\n' } }] },
  { toolCalls: [{ name: 'bash', args: { command: 'cat a.txt' } }] },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'wrote and read a.txt' } }] },
];

function parseStream(stdout: string): StreamEvent[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => streamEventSchema.parse(JSON.parse(line)));
}

describe('stream-json', () => {
  it('prints valid events in order, ending in the result status --json reports', async () => {
    const t = goalTestEnv('stream');
    const model = scriptedModel(t.home, turns);
    const run = await runCli(
      [
        'run',
        'write and read a.txt',
        '--workspace',
        t.workspace,
        '--model',
        model,
        '--output-format',
        'stream-json',
      ],
      t.env,
    );
    expect(run.code, run.stderr).toBe(0);
    const events = parseStream(run.stdout);
    expect(events.map((event) => event.type)).toEqual([
      'init',
      'step_start',
      'assistant_text',
      'tool_call',
      'usage',
      'tool_result',
      'task_update',
      'step_start',
      'tool_call',
      'usage',
      'tool_result',
      'step_start',
      'tool_call',
      'usage',
      'tool_result',
      'step_start',
      'tool_call',
      'usage',
      'tool_result',
      'result',
    ]);
    const cursors = events.map((event) => event.cursor);
    expect([...cursors].sort((a, b) => a - b)).toEqual(cursors);
    const result = events.at(-1) as ResultEvent;
    const status = JSON.parse((await runCli(['status', result.session_id, '--json'], t.env)).stdout);
    expect(result).toMatchObject({
      status: status.status,
      reason: status.reason,
      total_cost_usd: status.costUsd,
      steps: status.steps,
      iterations: status.iteration,
      summary: status.finishSummary,
      duration_ms: status.elapsedMs,
    });
    expect(result.usage.total_tokens).toBe(status.usage.totalTokens);
    const bash = events.find((event) => event.type === 'tool_result' && event.name === 'bash');
    expect(bash).toMatchObject({ ok: true });
    expect((bash as { output: string }).output).toContain('hello');

    // The stream opens with the goal's own init, with the status it had then.
    expect(events[0]).toMatchObject({ type: 'init', status: 'running' });

    // Attached late, from the start: the same events, opening with the session as it is now.
    const replay = await runCli(
      ['watch', result.session_id, '--output-format', 'stream-json', '--from-start'],
      t.env,
    );
    expect(replay.code, replay.stderr).toBe(0);
    const replayed = parseStream(replay.stdout);
    expect(replayed[0]).toMatchObject({ type: 'init', status: 'completed' });
    const withoutStatus = (list: StreamEvent[]) =>
      list.map((event) => (event.type === 'init' ? { ...event, status: undefined } : event));
    expect(withoutStatus(replayed)).toEqual(withoutStatus(events));

    // The transcript round-trips: every stored message, in order.
    const transcript = await runCli(['transcript', result.session_id, '--format', 'jsonl'], t.env);
    expect(transcript.code, transcript.stderr).toBe(0);
    const lines = transcript.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const store = await testStore(t.databaseUrl);
    const stored = await store.listMessages(result.session_id);
    await store.close();
    expect(lines.map((line) => line.seq)).toEqual(stored.map((entry) => entry.seq));
    expect(lines.map((line) => line.content)).toEqual(stored.map((entry) => entry.message.content));
    const markdown = await runCli(['transcript', result.session_id], t.env);
    expect(markdown.stdout).toContain('## Task');
    expect(markdown.stdout).toContain('### Result of bash');
  });

  describe('against a model with prices', () => {
    let server: OpenAITestServer;
    beforeAll(async () => {
      server = await startOpenAITestServer();
    });
    afterAll(async () => server?.close());

    it('reports the cost in result, also when watch --after N picks the stream up past its end', async () => {
      const t = goalTestEnv('stream-cost', { OPENAI_API_KEY: 'sk-stream-cost-test' });
      server.enqueue(
        { text: 'Looking.', toolCalls: [{ name: 'bash', args: { command: 'echo costed' } }] },
        { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'priced' } }] },
      );
      const run = await runCli(
        [
          'run',
          'spend a little',
          '--workspace',
          t.workspace,
          // Card openai/gpt-4o-mini has prices; the requests go to the local server.
          '--model',
          'openai:gpt-4o-mini',
          '--base-url',
          server.url,
          '--output-format',
          'stream-json',
        ],
        t.env,
      );
      expect(run.code, run.stderr).toBe(0);
      const events = parseStream(run.stdout);
      const result = events.at(-1) as ResultEvent;
      expect(result.type).toBe('result');
      const sessionId = result.session_id;
      const status = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
      const stats = JSON.parse((await runCli(['stats', sessionId, '--json'], t.env)).stdout);
      const statsCost = Object.values(stats.breakdown as Record<string, { costUsd: number }>).reduce(
        (sum, model) => sum + model.costUsd,
        0,
      );
      expect(result.total_cost_usd).toBeGreaterThan(0);
      expect(result.total_cost_usd).toBe(status.costUsd);
      expect(result.total_cost_usd).toBeCloseTo(statsCost, 12);
      expect(result).toMatchObject({ status: 'completed', reason: status.reason, summary: 'priced' });

      // After a cursor in the middle: exactly the events logged after it (one logged row may make
      // several events, which share its cursor).
      const middle = events[2];
      const after = await runCli(
        ['watch', sessionId, '--output-format', 'stream-json', '--after', String(middle.cursor)],
        t.env,
      );
      expect(after.code, after.stderr).toBe(0);
      const later = events.filter((event) => event.cursor > middle.cursor);
      expect(later.length).toBeGreaterThan(1);
      expect(later.length).toBeLessThan(events.length - 2);
      // A late attach opens with an init describing the session now, at the cursor it starts after.
      const [opening, ...afterEvents] = parseStream(after.stdout);
      expect(opening).toMatchObject({
        type: 'init',
        session_id: sessionId,
        cursor: middle.cursor,
        workflow_id: events[0].type === 'init' ? events[0].workflow_id : '',
        model: 'openai:gpt-4o-mini',
        workspace: t.workspace,
        status: 'completed',
      });
      expect(afterEvents).toEqual(later);

      // After the last event the log has nothing more: the result is made from the final status.
      const past = await runCli(
        ['watch', sessionId, '--output-format', 'stream-json', '--after', String(result.cursor)],
        t.env,
      );
      expect(past.code, past.stderr).toBe(0);
      const [pastOpening, fallback, ...rest] = parseStream(past.stdout);
      expect(pastOpening).toMatchObject({ type: 'init', cursor: result.cursor, status: 'completed' });
      expect(rest).toEqual([]);
      expect(fallback).toMatchObject({
        type: 'result',
        status: 'completed',
        reason: status.reason,
        summary: 'priced',
        steps: status.steps,
        total_cost_usd: status.costUsd,
      });
      expect((fallback as ResultEvent).total_cost_usd).toBeCloseTo(statsCost, 12);

      const wrong = await runCli(
        ['watch', sessionId, '--after', 'x', '--output-format', 'stream-json'],
        t.env,
      );
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain("--after must be an event's cursor");
      const textAfter = await runCli(['watch', sessionId, '--after', '1'], t.env);
      expect(textAfter.code).toBe(2);
      expect(textAfter.stderr).toContain('--after needs --output-format stream-json');
    });
  });

  it('transcript --full expands a spooled output, and the transcript redacts what the CLI knows is secret', async () => {
    // The worker that ran the goal did not know this value, so it reached the store as it was; the
    // process printing the transcript knows it (as a provider key) and must not print it.
    const planted = 'planted-value-4f9c2a7e1b';
    const t = goalTestEnv('transcript-full');
    // The output's last line is not in the command, which every format prints.
    const command = `seq 1 20000; echo "${planted}"; echo "END-OF-THE-$((6 * 7))-OUTPUT"`;
    const model = scriptedModel(t.home, [
      { toolCalls: [{ name: 'bash', args: { command } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'printed a lot' } }] },
    ]);
    const run = await runCli(
      ['run', 'print a lot', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(run.code, run.stderr).toBe(0);
    const { sessionId } = JSON.parse(run.stdout);
    const store = await testStore(t.databaseUrl);
    const stored = JSON.stringify(await store.listMessages(sessionId));
    await store.close();
    expect(stored).toContain(planted);
    expect(stored).not.toContain('END-OF-THE-42-OUTPUT');

    const knowing = { ...t.env, ANTHROPIC_API_KEY: planted };
    const short = await runCli(['transcript', sessionId, '--format', 'md'], knowing);
    expect(short.code, short.stderr).toBe(0);
    // The stored head and its footer naming the spool copy, not the whole output.
    expect(short.stdout).toContain('### Result of bash');
    expect(short.stdout).toContain('\n1\n2\n3\n');
    expect(short.stdout).toMatch(/"id":"spool:\d+"/);
    expect(short.stdout).not.toContain('END-OF-THE-42-OUTPUT');
    expect(short.stdout).not.toContain('\n20000\n');

    const full = await runCli(['transcript', sessionId, '--format', 'md', '--full'], knowing);
    expect(full.code, full.stderr).toBe(0);
    expect(full.stdout).toContain('\n19999\n20000\n[redacted]\nEND-OF-THE-42-OUTPUT');
    const jsonl = await runCli(['transcript', sessionId, '--format', 'jsonl', '--full'], knowing);
    expect(jsonl.stdout).toContain('END-OF-THE-42-OUTPUT');
    for (const printed of [short.stdout, full.stdout, jsonl.stdout]) {
      expect(printed).not.toContain(planted);
      // The value is in the command the model sent too, which every format prints.
      expect(printed).toContain('[redacted]');
    }
    // Without the key in its environment the CLI has nothing to redact: the redaction is the CLI's own.
    const unknowing = await runCli(['transcript', sessionId, '--format', 'md'], t.env);
    expect(unknowing.stdout).toContain(planted);
  });
});
