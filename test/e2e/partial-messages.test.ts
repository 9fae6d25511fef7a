/**
 * Issue 26 item 11: `--include-partial-messages` prints the model's text as it streams in, as
 * `text_delta` events between the step's start and its answer, in order, adding up to the final
 * text; without the flag there are none, and nothing is written for them. The built CLI against the
 * OpenAI test server over real HTTP, the model writing slowly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StreamEvent, streamEventSchema } from '../../core/stream-events';
import { runCli } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

const TEXT = 'Forty-two it is: I checked the sum twice, and both ways agree on it.';
/** Longer than the writer's flush interval (100 ms): each piece of the text is its own delta. */
const PIECE_DELAY_MS = 400;

const turns = () => [
  {
    text: TEXT,
    pieceDelayMs: PIECE_DELAY_MS,
    toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'answered' } }],
  },
];

function parseStream(stdout: string): StreamEvent[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => streamEventSchema.parse(JSON.parse(line)));
}

type Delta = Extract<StreamEvent, { type: 'text_delta' }>;

describe('--include-partial-messages', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('prints the text as it streams, in order, adding up to the final text', async () => {
    const t = goalTestEnv('partial', { OPENAI_COMPATIBLE_API_KEY: 'sk-partial' });
    server.enqueue(...turns());
    const run = await runCli(
      goalArgs('run', 'say the answer', t, server, [
        '--output-format',
        'stream-json',
        '--include-partial-messages',
      ]),
      t.env,
    );
    expect(run.code, run.stderr).toBe(0);
    const events = parseStream(run.stdout);
    const types = events.map((event) => event.type);
    const deltas = events.filter((event): event is Delta => event.type === 'text_delta');
    // Several pieces, each where the one before it ended, all between the step's start and its answer.
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((delta) => delta.text).join('')).toBe(TEXT);
    let offset = 0;
    for (const delta of deltas) {
      expect(delta).toMatchObject({ step: 1, attempt: 1, offset });
      offset += delta.text.length;
    }
    const first = types.indexOf('text_delta');
    const last = types.lastIndexOf('text_delta');
    expect(types.slice(0, first)).toEqual(['init', 'step_start']);
    expect(types.slice(first, last + 1).every((type) => type === 'text_delta')).toBe(true);
    expect(types[last + 1]).toBe('assistant_text');
    expect(events[last + 1]).toMatchObject({ type: 'assistant_text', text: TEXT });
    expect(types.at(-1)).toBe('result');

    // The transcript has the answer once, whole; the pieces are not in it.
    const sessionId = events[0].session_id;
    const store = await testStore(t.databaseUrl);
    const messages = await store.listMessages(sessionId);
    await store.close();
    const texts = messages.flatMap((entry) =>
      entry.message.role === 'assistant'
        ? entry.message.content.flatMap((part) => (part.type === 'text' ? [part.text] : []))
        : [],
    );
    expect(texts).toEqual([TEXT]);
  });

  it('prints no deltas without the flag, and the step writes none', async () => {
    const t = goalTestEnv('no-partial', { OPENAI_COMPATIBLE_API_KEY: 'sk-partial' });
    server.enqueue(...turns());
    const run = await runCli(
      goalArgs('run', 'say the answer', t, server, ['--output-format', 'stream-json']),
      t.env,
    );
    expect(run.code, run.stderr).toBe(0);
    const events = parseStream(run.stdout);
    expect(events.some((event) => event.type === 'text_delta')).toBe(false);
    expect(events.find((event) => event.type === 'assistant_text')).toMatchObject({ text: TEXT });
    const store = await testStore(t.databaseUrl);
    const written = await store.listStreamDeltas(
      events[0].session_id,
      { execution: 1, step: 1 },
      { attempt: 0, seq: -1 },
    );
    await store.close();
    expect(written).toEqual([]);
  });

  it('refuses the flag without stream-json (exit 2)', async () => {
    const t = goalTestEnv('partial-text', { OPENAI_COMPATIBLE_API_KEY: 'sk-partial' });
    const run = await runCli(
      goalArgs('run', 'say the answer', t, server, ['--include-partial-messages']),
      t.env,
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--include-partial-messages needs --output-format stream-json');
  });
});
