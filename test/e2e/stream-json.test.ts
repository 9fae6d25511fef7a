/**
 * Issue 11 acceptance 5 and 6: `--output-format stream-json` prints only lines the event schema
 * accepts, in the exact order the goal did things, ending in a `result` that matches
 * `status --json`; `watch --from-start` replays it later; `transcript --format jsonl` holds every
 * stored message in order.
 */
import { describe, expect, it } from 'vitest';
import { type StreamEvent, streamEventSchema } from '../../core/stream-events';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';

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
    const result = events.at(-1) as Extract<StreamEvent, { type: 'result' }>;
    const status = JSON.parse((await runCli(['status', result.session_id, '--json'], t.env)).stdout);
    expect(result).toMatchObject({
      status: status.status,
      steps: status.steps,
      iterations: status.iteration,
      summary: status.finishSummary,
      duration_ms: status.elapsedMs,
    });
    expect(result.usage.total_tokens).toBe(status.usage.totalTokens);
    const bash = events.find((event) => event.type === 'tool_result' && event.name === 'bash');
    expect(bash).toMatchObject({ ok: true });
    expect((bash as { output: string }).output).toContain('hello');

    // Attached late, from the start: the same events.
    const replay = await runCli(
      ['watch', result.session_id, '--output-format', 'stream-json', '--from-start'],
      t.env,
    );
    expect(replay.code, replay.stderr).toBe(0);
    expect(parseStream(replay.stdout)).toEqual(events);

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
});
