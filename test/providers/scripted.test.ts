import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, describe, expect, it } from 'vitest';
import { createModelClient, type ModelRequest } from '../../activities/providers';
import { FailureType } from '../../core/errors';
import { userText } from '../../core/messages';

const dir = mkdtempSync(path.join(tmpdir(), 'goalrun-scripted-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fileCount = 0;
function script(content: unknown): string {
  fileCount += 1;
  const file = path.join(dir, `script-${fileCount}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

function request(stepNumber: number, overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    system: 'system prompt',
    messages: [userText('do the thing')],
    tools: [],
    stepNumber,
    abortSignal: new AbortController().signal,
    ...overrides,
  };
}

function scripted(file: string) {
  return createModelClient(`scripted:${file}`, { env: {} });
}

describe('scripted provider', () => {
  it('replays turn N for step N, with deterministic tool call ids', async () => {
    const file = script({
      turns: [
        {
          text: 'Looking around.',
          toolCalls: [{ name: 'bash', args: { command: 'ls' } }, { name: 'read_file' }],
        },
        { text: 'All done.', usage: { input: 100, output: 20, cacheRead: 80 } },
      ],
    });
    const client = scripted(file);

    const first = await client.stream(request(1));
    expect(first.text).toBe('Looking around.');
    expect(first.finishReason).toBe('tool-calls');
    expect(first.toolCalls).toEqual([
      { type: 'tool-call', toolCallId: 'call_1_0', toolName: 'bash', input: { command: 'ls' } },
      { type: 'tool-call', toolCallId: 'call_1_1', toolName: 'read_file', input: {} },
    ]);

    const second = await client.stream(request(2));
    expect(second.text).toBe('All done.');
    expect(second.finishReason).toBe('stop');
    expect(second.toolCalls).toEqual([]);
    expect(second.usage).toEqual({
      inputTokens: 100,
      outputTokens: 20,
      cacheReadTokens: 80,
      cacheWriteTokens: 0,
    });
  });

  it('estimates usage from characters when the turn gives none', async () => {
    const file = script({ turns: [{ text: 'x'.repeat(40) }] });
    const req = request(1);
    const response = await scripted(file).stream(req);
    const requestChars =
      req.system.length + JSON.stringify(req.messages).length + JSON.stringify(req.tools).length;
    expect(response.usage).toEqual({
      inputTokens: Math.ceil(requestChars / 4),
      outputTokens: 10,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it('returns argsRaw like a model that streamed it: raw when malformed, parsed when valid', async () => {
    const file = script({
      turns: [
        {
          toolCalls: [
            { name: 'bash', argsRaw: '{"command": "ls"' },
            { name: 'bash', argsRaw: '{"a":1}' },
          ],
        },
      ],
    });
    const response = await scripted(file).stream(request(1));
    expect(response.toolCalls[0].input).toBe('{"command": "ls"');
    expect(response.toolCalls[1].input).toEqual({ a: 1 });
  });

  it('answers a fixed text past the end of the script', async () => {
    const file = script({ turns: [{ text: 'only turn' }] });
    const response = await scripted(file).stream(request(3));
    expect(response.text).toBe(`(scripted model: no turn 3 in ${file})`);
    expect(response.toolCalls).toEqual([]);
    expect(response.finishReason).toBe('stop');
  });

  it('waits delayMs while reporting progress about every 500 ms', async () => {
    const file = script({ turns: [{ text: 'slow answer', delayMs: 1_200 }] });
    const progress: number[] = [];
    const response = await scripted(file).stream(request(1, { onProgress: (chars) => progress.push(chars) }));
    expect(response.text).toBe('slow answer');
    // Two ticks during the wait (500, 1000 ms) plus the final count.
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress.at(-1)).toBe('slow answer'.length);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
  });

  it('rejects promptly with an AbortError when aborted during the delay', async () => {
    // Delayed for longer than the test may run: it can pass only by honouring the abort.
    const file = script({ turns: [{ text: 'never', delayMs: 600_000 }] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = await scripted(file)
      .stream(request(1, { abortSignal: controller.signal }))
      .catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
  });

  it('rejects at once when the signal has already fired', async () => {
    const file = script({ turns: [{ text: 'never' }] });
    const controller = new AbortController();
    controller.abort();
    await expect(scripted(file).stream(request(1, { abortSignal: controller.signal }))).rejects.toMatchObject(
      {
        name: 'AbortError',
      },
    );
  });

  it.each([
    ['a missing file', undefined, 'does not exist'],
    ['invalid JSON', '{"turns": [', 'is not valid JSON'],
    ['a schema error', { turns: [{ text: 5 }] }, 'turns[0].text'],
    ['a non-array turns', { turns: {} }, 'turns: '],
  ])('fails with a non-retryable ConfigError for %s', async (_label, content, expected) => {
    const file = content === undefined ? path.join(dir, 'absent.json') : script(content);
    const err = await scripted(file)
      .stream(request(1))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: FailureType.ConfigError, nonRetryable: true });
    expect((err as Error).message).toContain(expected);
    expect((err as Error).message).toContain(file);
  });
});
