import { createServer } from 'node:net';
import { ApplicationFailure, msToNumber } from '@temporalio/common';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createModelClient, type ModelClient, type ModelRequest } from '../../activities/providers';
import { FailureType } from '../../core/errors';
import { type StoredMessage, userText } from '../../core/messages';
import {
  type OpenAITestServer,
  openAIErrorResponse,
  startOpenAITestServer,
} from '../support/openai-test-server';

const MODEL = 'gpt-test';
const API_KEY = 'sk-test-secret-key-0123456789';
/** An abort must end the call well before the server's pause would have. */
/** Longer than any test may run: an answer delayed this long is one the test never waits for. */
const NEVER_MS = 600_000;

let server: OpenAITestServer;

beforeAll(async () => {
  server = await startOpenAITestServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  expect(server.queued()).toBe(0);
  server.requests.length = 0;
});

function client(provider = 'openai-compatible', baseUrl = server.url): ModelClient {
  // openai: reads OPENAI_API_KEY, openai-compatible: its own key (issue 24 §8).
  return createModelClient(`${provider}:${MODEL}`, {
    baseUrl,
    env: { OPENAI_API_KEY: API_KEY, OPENAI_COMPATIBLE_API_KEY: API_KEY },
  });
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    system: 'You are a test.',
    messages: [userText('Say hello.')],
    tools: [
      {
        name: 'read_file',
        description: 'Reads a file.',
        inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
    ],
    stepNumber: 1,
    abortSignal: new AbortController().signal,
    ...overrides,
  };
}

/** Runs a call that must fail and returns its ApplicationFailure. */
async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('AI SDK client over HTTP', () => {
  it('streams text and reports usage and progress', async () => {
    server.enqueue({
      text: 'Hello there, this arrives in pieces.',
      usage: { prompt_tokens: 42, completion_tokens: 7, cached_tokens: 5 },
    });
    const progress: number[] = [];
    const response = await client().stream(request({ onProgress: (chars) => progress.push(chars) }));

    expect(response.text).toBe('Hello there, this arrives in pieces.');
    expect(response.toolCalls).toEqual([]);
    expect(response.finishReason).toBe('stop');
    expect(response.usage).toEqual({
      inputTokens: 42,
      outputTokens: 7,
      cacheReadTokens: 5,
      cacheWriteTokens: 0,
    });
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.at(-1)).toBe(response.text.length);

    const [sent] = server.requests;
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.body.stream).toBe(true);
    expect(sent.body.stream_options).toEqual({ include_usage: true });
    expect(sent.body.messages).toEqual([
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: 'Say hello.' },
    ]);
    expect(sent.body.tools?.[0].function.name).toBe('read_file');
  });

  it('works with the openai provider pointed at the same server', async () => {
    server.enqueue({ text: 'Hi from openai.', usage: { prompt_tokens: 3, completion_tokens: 4 } });
    const response = await client('openai').stream(request());
    expect(response.text).toBe('Hi from openai.');
    expect(response.usage.inputTokens).toBe(3);
    expect(response.usage.outputTokens).toBe(4);
  });

  it('works with the ollama provider (OpenAI-compatible endpoint)', async () => {
    server.enqueue({ text: 'Hi from ollama.' });
    const ollama = createModelClient(`ollama:${MODEL}`, { env: { OLLAMA_BASE_URL: server.url } });
    const response = await ollama.stream(request());
    expect(response.text).toBe('Hi from ollama.');
    expect(server.requests[0].headers.authorization).toBeUndefined();
  });

  it('returns tool calls whose arguments arrived split across chunks', async () => {
    server.enqueue({
      text: 'Reading both.',
      toolCalls: [
        { name: 'read_file', args: { path: 'src/a-rather-long-file-name.ts' } },
        { name: 'read_file', args: { path: 'b.txt', extra: [1, 2, 3] } },
      ],
    });
    const progress: number[] = [];
    const response = await client().stream(request({ onProgress: (chars) => progress.push(chars) }));

    expect(response.finishReason).toBe('tool-calls');
    expect(response.text).toBe('Reading both.');
    expect(response.toolCalls).toEqual([
      {
        type: 'tool-call',
        toolCallId: 'call_1_0',
        toolName: 'read_file',
        input: { path: 'src/a-rather-long-file-name.ts' },
      },
      {
        type: 'tool-call',
        toolCallId: 'call_1_1',
        toolName: 'read_file',
        input: { path: 'b.txt', extra: [1, 2, 3] },
      },
    ]);
    // Argument characters count as progress too.
    expect(progress.at(-1)).toBeGreaterThan(response.text.length);
  });

  it('returns malformed tool arguments as the raw string instead of failing', async () => {
    server.enqueue({ toolCalls: [{ name: 'read_file', argsRaw: '{"path": "a.txt"' }] });
    const response = await client().stream(request());
    expect(response.toolCalls).toHaveLength(1);
    expect(response.toolCalls[0].input).toBe('{"path": "a.txt"');
  });

  it('sends a stored transcript back in OpenAI form, with malformed inputs as {}', async () => {
    server.enqueue({ text: 'ok' });
    const messages: StoredMessage[] = [
      userText('Do it.'),
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Calling.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'read_file', input: { path: 'a' } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'read_file', input: '{"path": ' },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'read_file',
            output: { type: 'text', value: 'A' },
          },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'read_file',
            output: { type: 'error-text', value: 'arguments are not valid JSON' },
          },
        ],
      },
    ];
    await client().stream(request({ messages, stepNumber: 2 }));
    const sent = server.requests[0].body.messages ?? [];
    expect(sent[2]).toMatchObject({
      role: 'assistant',
      content: 'Calling.',
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } },
        { id: 'c2', type: 'function', function: { name: 'read_file', arguments: '{}' } },
      ],
    });
    expect(sent[3]).toMatchObject({ role: 'tool', tool_call_id: 'c1', content: 'A' });
    expect(sent[4]).toMatchObject({
      role: 'tool',
      tool_call_id: 'c2',
      content: 'arguments are not valid JSON',
    });
  });

  it('maps 429 with Retry-After: 2 to a retryable ProviderUnavailable with a 2 s delay', async () => {
    server.enqueue(openAIErrorResponse(429, 'Rate limit reached', { headers: { 'Retry-After': '2' } }));
    const failure = await failureOf(client().stream(request()));
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBeDefined();
    expect(msToNumber(failure.nextRetryDelay!)).toBe(2_000);
    expect(failure.message).toContain('HTTP 429');
    // The SDK must not retry on its own: Temporal is the only retry layer.
    expect(server.requests).toHaveLength(1);
  });

  it('maps 500 to a retryable ProviderUnavailable without a forced delay', async () => {
    server.enqueue(openAIErrorResponse(500, 'The server had an error', { type: 'server_error' }));
    const failure = await failureOf(client().stream(request()));
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBeUndefined();
    expect(server.requests).toHaveLength(1);
  });

  it('maps 401 to a non-retryable ProviderAuth naming provider, model and status, without the key', async () => {
    server.enqueue(
      openAIErrorResponse(401, `Incorrect API key provided: ${API_KEY}. You can find your API key at ...`, {
        code: 'invalid_api_key',
      }),
    );
    const failure = await failureOf(client().stream(request()));
    expect(failure.type).toBe(FailureType.ProviderAuth);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toMatch(
      /^openai-compatible model gpt-test: HTTP 401 Unauthorized: Incorrect API key/,
    );
    expect(failure.message).not.toContain(API_KEY);
    expect(failure.message).not.toContain('0123456789');
  });

  it('maps context_length_exceeded to a non-retryable ContextOverflow', async () => {
    server.enqueue(
      openAIErrorResponse(400, "This model's maximum context length is 8192 tokens.", {
        code: 'context_length_exceeded',
      }),
    );
    const failure = await failureOf(client().stream(request()));
    expect(failure.type).toBe(FailureType.ContextOverflow);
    expect(failure.nonRetryable).toBe(true);
  });

  it('maps another 400 to a non-retryable ProviderBadRequest', async () => {
    server.enqueue(openAIErrorResponse(400, "Invalid value for 'tools'"));
    const failure = await failureOf(client().stream(request()));
    expect(failure.type).toBe(FailureType.ProviderBadRequest);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain("HTTP 400 Bad Request: Invalid value for 'tools'");
  });

  it('maps a non-JSON 502 page to a retryable ProviderUnavailable', async () => {
    server.enqueue({ status: 502, body: '<html><body>Bad gateway</body></html>' });
    const failure = await failureOf(client().stream(request()));
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.nonRetryable).toBe(false);
  });

  it('maps an error event in the middle of the stream to a retryable failure', async () => {
    server.enqueue({
      text: 'Partial answer',
      streamError: { message: 'The server had an error', type: 'server_error' },
    });
    const failure = await failureOf(client().stream(request()));
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('The server had an error');
  });

  it('maps a context error event in the stream to ContextOverflow', async () => {
    server.enqueue({ streamError: { message: 'too long', code: 'context_length_exceeded' } });
    const failure = await failureOf(client().stream(request()));
    expect(failure.type).toBe(FailureType.ContextOverflow);
  });

  it('maps a connection dropped mid-stream to a retryable failure', async () => {
    server.enqueue({ text: 'never arrives', disconnectMidStream: true });
    const failure = await failureOf(client().stream(request()));
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.nonRetryable).toBe(false);
  });

  it('gives up a stream stalled mid-answer after the idle timeout as a retryable ProviderStalled', async () => {
    server.enqueue({ text: 'never arrives', stallAfterFirstChunk: true });
    const started = Date.now();
    const failure = await failureOf(client().stream(request({ idleTimeoutMs: 1_000 })));
    expect(failure.type).toBe(FailureType.ProviderStalled);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toMatch(
      /^provider stream stalled: openai-compatible model gpt-test sent nothing for 1 s/,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('counts every byte as life, SSE keep-alive comments included', async () => {
    // Silent text for 3 s, with a ping every 200 ms: longer than the 1 s idle timeout, but never idle.
    server.enqueue({ text: 'slow but alive', delayMs: 3_000, keepAliveMs: 200 });
    let byteChunks = 0;
    const response = await client().stream(
      request({ idleTimeoutMs: 1_000, onBytes: () => void byteChunks++ }),
    );
    expect(response.text).toBe('slow but alive');
    // The pings reach the listener (the step heartbeats on them), not just the text.
    expect(byteChunks).toBeGreaterThan(10);
  });

  it('maps a refused connection to a retryable ProviderUnavailable', async () => {
    const port = await closedPort();
    const failure = await failureOf(
      client('openai-compatible', `http://127.0.0.1:${port}/v1`).stream(request()),
    );
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toMatch(/^openai-compatible model gpt-test: network error/);
  });

  it('rejects promptly with an AbortError when the signal fires mid-stream', async () => {
    // The answer would come only after the test's own timeout: the call can pass only by honouring the abort.
    server.enqueue({ text: 'slow answer', delayMs: NEVER_MS });
    const controller = new AbortController();
    const call = client().stream(request({ abortSignal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe('AbortError');
    expect(err).not.toBeInstanceOf(ApplicationFailure);
  });

  it('does not call the server when the signal has already fired', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(client().stream(request({ abortSignal: controller.signal }))).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(server.requests).toHaveLength(0);
  });
});

/** A port on 127.0.0.1 that nothing listens on (bound once, then released). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
