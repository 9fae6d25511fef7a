/**
 * goalrun's own Chat Completions client against the AI SDK client it replaced for
 * `openai-compatible:` and `ollama:` models: over real HTTP to the test server, the same request
 * bytes, the same answers and the same failures; then its pieces one by one.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAiSdkClient } from '../../activities/providers/ai-sdk-client';
import { AnswerReader } from '../../activities/providers/chat-completions/answer-reader';
import { createChatCompletionsClient } from '../../activities/providers/chat-completions/client';
import { MAX_EVENT_CHARS, SseEvents } from '../../activities/providers/chat-completions/sse-events';
import { createLanguageModel } from '../../activities/providers/language-model';
import type { ModelClient, ModelRequest } from '../../activities/providers/types';
import { type StoredMessage, userText } from '../../core/messages';
import {
  type OpenAITestServer,
  openAIErrorResponse,
  startOpenAITestServer,
  type TestResponse,
} from '../support/openai-test-server';

const MODEL = 'local-model';
const API_KEY = 'sk-chat-completions-test-key-42';
const CONTEXT = { provider: 'openai-compatible', model: MODEL, secrets: [API_KEY] };

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

function ownClient(baseUrl = server.url, apiKey: string | undefined = API_KEY): ModelClient {
  return createChatCompletionsClient(`openai-compatible:${MODEL}`, MODEL, { baseUrl, apiKey }, CONTEXT);
}

function sdkClient(baseUrl = server.url): ModelClient {
  const model = createLanguageModel(
    { provider: 'openai-compatible', model: MODEL },
    { baseUrl, apiKey: API_KEY },
  );
  return createAiSdkClient(`openai-compatible:${MODEL}`, model, CONTEXT);
}

const READ_FILE = {
  name: 'read_file',
  description: 'Reads a file.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

/** A transcript with every kind of part goalrun stores, images and malformed inputs included. */
const TRANSCRIPT: StoredMessage[] = [
  userText('Describe the picture, then read a.txt.'),
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Here it is:' },
      { type: 'image', imageId: 7, mediaType: 'image/png', bytes: 4, name: 'shot.png' },
      { type: 'image', imageId: 8, mediaType: 'image/png', bytes: 4, name: 'gone.png' },
    ],
  },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'A square. Reading.' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'read_file', input: { path: 'a.txt' } },
      { type: 'tool-call', toolCallId: 'c2', toolName: 'read_file', input: '{"path": ' },
      { type: 'tool-call', toolCallId: 'c3', toolName: 'read_file', input: '{"path":"b.txt"}' },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'c1',
        toolName: 'read_file',
        output: { type: 'text', value: 'A\n' },
      },
      {
        type: 'tool-result',
        toolCallId: 'c2',
        toolName: 'read_file',
        output: { type: 'error-text', value: 'arguments are not valid JSON' },
      },
      { type: 'tool-result', toolCallId: 'c3', toolName: 'read_file', output: { type: 'text', value: '' } },
    ],
  },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c4', toolName: 'read_file', input: {} }] },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'c4',
        toolName: 'read_file',
        output: { type: 'text', value: 'ü 中 😀' },
      },
    ],
  },
  { role: 'assistant', content: [{ type: 'text', text: '  ' }] },
];

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    system: 'You are a test.',
    messages: TRANSCRIPT,
    tail: 'Tasks: 1. read a.txt',
    images: new Map([[7, { mediaType: 'image/png', data: new Uint8Array([137, 80, 78, 71]) }]]),
    tools: [READ_FILE, { ...READ_FILE, name: 'list_files', description: 'Lists files.' }],
    stepNumber: 3,
    abortSignal: new AbortController().signal,
    ...overrides,
  };
}

/** What a call ended in: its answer, or its failure's type, retryability and message. */
async function outcomeOf(client: ModelClient, req: ModelRequest): Promise<unknown> {
  try {
    const answer = await client.stream(req);
    return { answer };
  } catch (err) {
    if (!(err instanceof ApplicationFailure)) throw err;
    return {
      type: err.type,
      nonRetryable: err.nonRetryable,
      message: err.message,
      delay: err.nextRetryDelay,
    };
  }
}

/** The same turn answered to both clients, one after the other. */
async function bothOutcomes(turn: TestResponse, req: ModelRequest = request()) {
  server.enqueue(turn);
  const sdk = await outcomeOf(sdkClient(), req);
  server.enqueue(turn);
  const own = await outcomeOf(ownClient(), req);
  return { sdk, own };
}

describe('the Chat Completions client against the AI SDK client it replaced', () => {
  it('sends the same request body, byte for byte', async () => {
    server.enqueue({ text: 'ok' }, { text: 'ok' });
    await sdkClient().stream(request());
    await ownClient().stream(request());
    const [viaSdk, viaOwn] = server.requests;
    expect(viaOwn.raw).toBe(viaSdk.raw);
    expect(viaOwn.path).toBe('/v1/chat/completions');
    expect(viaOwn.body.messages?.[2]).toMatchObject({
      role: 'user',
      content: [
        { type: 'text' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw==' } },
        { type: 'text' },
      ],
    });
  });

  it('sends no tools key when no tools are offered, as the SDK does', async () => {
    server.enqueue({ text: 'ok' }, { text: 'ok' });
    await sdkClient().stream(request({ tools: [], tail: undefined, messages: [userText('Sum up.')] }));
    await ownClient().stream(request({ tools: [], tail: undefined, messages: [userText('Sum up.')] }));
    expect(server.requests[1].raw).toBe(server.requests[0].raw);
    expect(server.requests[1].body.tools).toBeUndefined();
  });

  it.each<[string, TestResponse]>([
    ['text', { text: 'Hello there, this is a longer answer in pieces.' }],
    [
      'text and tool calls split across chunks',
      {
        text: 'Reading both.',
        toolCalls: [
          { name: 'read_file', args: { path: 'a/very/long/path/to/a/file.txt' }, id: 'call_a' },
          { name: 'list_files', args: {}, id: 'call_b' },
        ],
      },
    ],
    [
      'malformed tool arguments',
      { toolCalls: [{ name: 'read_file', argsRaw: '{"path": "a.txt"', id: 'x1' }] },
    ],
    [
      'cached usage',
      { text: 'ok', usage: { prompt_tokens: 900, completion_tokens: 12, cached_tokens: 800 } },
    ],
    ['a cut-off answer', { text: 'truncated', finishReason: 'length' }],
    ['an unknown finish reason', { text: 'odd', finishReason: 'eos' }],
  ])('returns the same answer for %s', async (_name, turn) => {
    const { sdk, own } = await bothOutcomes(turn);
    expect(own).toEqual(sdk);
  });

  it.each<[string, TestResponse]>([
    [
      '429 with Retry-After',
      openAIErrorResponse(429, 'Rate limit reached', { headers: { 'Retry-After': '3' } }),
    ],
    ['500', openAIErrorResponse(500, 'The server had an error', { type: 'server_error' })],
    ['401 quoting the key', openAIErrorResponse(401, `Incorrect API key provided: ${API_KEY}.`)],
    [
      'a context overflow',
      openAIErrorResponse(400, 'maximum context length is 8192', { code: 'context_length_exceeded' }),
    ],
    ['another 400', openAIErrorResponse(400, "Invalid value for 'tools'")],
    ['a 502 page', { status: 502, body: '<html><body>Bad gateway</body></html>' }],
    ['an empty 503', { status: 503, body: '' }],
    [
      'an error event mid-answer',
      { text: 'Partial', streamError: { message: 'overloaded', type: 'server_error' } },
    ],
    ['a context error event', { streamError: { message: 'too long', code: 'context_length_exceeded' } }],
  ])('fails the same way on %s', async (_name, turn) => {
    const { sdk, own } = await bothOutcomes(turn);
    expect(own).toEqual(sdk);
    expect(JSON.stringify(own)).not.toContain(API_KEY);
  });

  it('fails a connection dropped mid-answer as a retryable network error, as the SDK did', async () => {
    const { sdk, own } = await bothOutcomes({ text: 'never arrives', disconnectMidStream: true });
    expect(own).toMatchObject({ type: 'ProviderUnavailable', nonRetryable: false });
    expect(sdk).toMatchObject({ type: 'ProviderUnavailable', nonRetryable: false });
    expect((own as { message: string }).message).toMatch(
      /^openai-compatible model local-model: network error: /,
    );
  });

  it('fails a refused connection as a retryable network error that says so', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const own = await outcomeOf(ownClient(`http://127.0.0.1:${port}/v1`), request());
    const sdk = await outcomeOf(sdkClient(`http://127.0.0.1:${port}/v1`), request());
    expect(own).toEqual(sdk);
    expect((own as { message: string }).message).toContain(
      'network error: Cannot connect to API: connect ECONNREFUSED',
    );
  });
});

describe('the Chat Completions client over its own connection', () => {
  let plain: Server;
  let url: string;
  const seen: IncomingHttpHeaders[] = [];
  /** The client's port of each request's connection. */
  const ports: number[] = [];
  /** What the server sends as the body of every answer. */
  let answer = '';
  /** How the server answers; by default `answer` as a plain event stream. */
  let respond: (res: ServerResponse) => void;
  const plainAnswer = (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(answer);
  };

  beforeAll(async () => {
    plain = createServer((req, res) => {
      seen.push(req.headers);
      ports.push(req.socket.remotePort ?? 0);
      req.resume();
      req.on('end', () => respond(res));
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/v1/`;
  });
  afterAll(async () => {
    plain.closeAllConnections();
    await new Promise((resolve) => plain.close(resolve));
  });

  beforeEach(() => {
    respond = plainAnswer;
  });

  const finish = 'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ] as const)('asks for a plain answer, and still reads one sent with %s', async (coding, compress) => {
    seen.length = 0;
    respond = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': coding });
      res.end(compress(Buffer.from(`data: {"choices":[{"delta":{"content":"squeezed"}}]}\n\n${finish}`)));
    };
    const response = await ownClient(url).stream(request());
    expect(response).toMatchObject({ text: 'squeezed', finishReason: 'stop' });
    expect(seen[0]['accept-encoding']).toBe('identity');
  });

  it('follows no redirect, and says where the endpoint points instead', async () => {
    seen.length = 0;
    respond = (res) => {
      res.writeHead(308, { location: 'https://models.example/v1/chat/completions' });
      res.end();
    };
    const outcome = await outcomeOf(ownClient(url), request());
    expect(outcome).toMatchObject({ type: 'ConfigError', nonRetryable: true });
    expect((outcome as { message: string }).message).toBe(
      'openai-compatible model local-model: HTTP 308 Permanent Redirect to https://models.example/v1/chat/completions: the endpoint redirects; set the base URL (--base-url, config base_url, OPENAI_BASE_URL or OLLAMA_BASE_URL) to where it points',
    );
    expect(seen).toHaveLength(1);
  });

  it('keeps the connection for the next call, and sends the key only as its bearer token', async () => {
    answer = `data: {"choices":[{"delta":{"content":"hi"}}]}\n\n${finish}`;
    seen.length = 0;
    ports.length = 0;
    for (let call = 0; call < 3; call++) {
      const response = await ownClient(url).stream(request());
      expect(response.text).toBe('hi');
    }
    // One connection for the three calls.
    expect(new Set(ports).size).toBe(1);
    expect(seen.map((headers) => headers.authorization)).toEqual(Array(3).fill(`Bearer ${API_KEY}`));
    expect(seen[0]['content-type']).toBe('application/json');
  });

  it('sends no authorization header to an endpoint without a key', async () => {
    answer = finish;
    seen.length = 0;
    const keyless = createChatCompletionsClient(`ollama:${MODEL}`, MODEL, { baseUrl: url }, CONTEXT);
    await keyless.stream(request());
    expect(seen[0].authorization).toBeUndefined();
  });

  it('reads CRLF line ends, comments, several data lines and a last event without a blank line', async () => {
    answer =
      ': keep-alive\r\n\r\n' +
      'event: message\r\ndata: {"choices":[{"delta":{"content":"a"}}]}\r\n\r\n' +
      'data: {"choices":[{"delta":\r\ndata: {"content":"b"}}]}\r\n\r\n' +
      'data: {"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}';
    const response = await ownClient(url).stream(request());
    expect(response).toMatchObject({ text: 'ab', finishReason: 'stop' });
    expect(response.usage).toMatchObject({ inputTokens: 5, outputTokens: 2 });
  });

  it('fails an answer that ends without a finish reason as a retryable failure', async () => {
    answer = 'data: {"choices":[{"delta":{"content":"half an answ"}}]}\n\n';
    const outcome = await outcomeOf(ownClient(url), request());
    expect(outcome).toMatchObject({ type: 'ProviderUnavailable', nonRetryable: false });
    expect((outcome as { message: string }).message).toContain('without a finish reason');
  });

  it('fails an event that is not JSON, naming it', async () => {
    answer = `data: {"choices": [oops\n\n${finish}`;
    const outcome = await outcomeOf(ownClient(url), request());
    expect(outcome).toMatchObject({ type: 'ProviderUnavailable', nonRetryable: false });
    expect((outcome as { message: string }).message).toContain('JSON parsing failed');
  });
});

describe('SseEvents', () => {
  const stream =
    '\uFEFF: ping\n\ndata: one\n\ndata: two\r\ndata: lines\r\n\r\nid: 4\rdata:three\r\rdata: {"x": "ü 中"}\n\n';
  const expected = ['one', 'two\nlines', 'three', '{"x": "ü 中"}'];

  it('gives the same events however the text is cut', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      for (const second of [cut, Math.min(stream.length, cut + 1), Math.min(stream.length, cut + 7)]) {
        const events: string[] = [];
        const parser = new SseEvents((data) => events.push(data));
        parser.push(stream.slice(0, cut));
        parser.push(stream.slice(cut, second));
        parser.push(stream.slice(second));
        parser.end();
        expect(events, `cut at ${cut} and ${second}`).toEqual(expected);
      }
    }
  });

  it('refuses a line or an event past the limit instead of growing without end', () => {
    const endless = new SseEvents(() => undefined);
    endless.push('data: ');
    expect(() => endless.push('x'.repeat(MAX_EVENT_CHARS))).toThrow(/over 16777216 characters/);
    const manyLines = new SseEvents(() => undefined);
    const line = `data: ${'y'.repeat(1024 * 1024)}\n`;
    expect(() => {
      for (let i = 0; i < 17; i++) manyLines.push(line);
    }).toThrow(/over 16777216 characters/);
  });

  it('delivers nothing for comments and fields without data', () => {
    const events: string[] = [];
    const parser = new SseEvents((data) => events.push(data));
    parser.push(': only a comment\nevent: ping\nretry: 10\n\n');
    parser.end();
    expect(events).toEqual([]);
  });
});

describe('AnswerReader', () => {
  const finish = JSON.stringify({ choices: [{ delta: {}, finish_reason: 'tool_calls' }] });
  const chunk = (delta: unknown) => JSON.stringify({ choices: [{ delta }] });

  function read(events: string[], listeners = {}) {
    const reader = new AnswerReader(listeners);
    for (const data of events) reader.event(data);
    return reader.response();
  }

  it('assembles OpenAI-style pieces: an index in each, the id and name in the first', () => {
    const answer = read([
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'read_file', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'list_files', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':"a"}' } }] }),
      finish,
      '[DONE]',
    ]);
    expect(answer.toolCalls).toEqual([
      { type: 'tool-call', toolCallId: 'a', toolName: 'read_file', input: { path: 'a' } },
      { type: 'tool-call', toolCallId: 'b', toolName: 'list_files', input: {} },
    ]);
    expect(answer.finishReason).toBe('tool-calls');
  });

  it('assembles calls that come whole, with index 0 for each and their own ids', () => {
    const answer = read([
      chunk({
        tool_calls: [{ index: 0, id: 'a', function: { name: 'read_file', arguments: '{"path":"1"}' } }],
      }),
      chunk({
        tool_calls: [{ index: 0, id: 'b', function: { name: 'read_file', arguments: '{"path":"2"}' } }],
      }),
      finish,
    ]);
    expect(answer.toolCalls.map((call) => [call.toolCallId, call.input])).toEqual([
      ['a', { path: '1' }],
      ['b', { path: '2' }],
    ]);
  });

  it('assembles calls without indices by their ids, and gives a call without an id one of its own', () => {
    const answer = read([
      chunk({ tool_calls: [{ id: 'a', function: { name: 'read_file', arguments: '{"pa' } }] }),
      chunk({ tool_calls: [{ id: 'a', function: { arguments: 'th":"x"}' } }] }),
      chunk({ tool_calls: [{ function: { name: 'list_files', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ function: { name: 'list_files', arguments: '{}' }, id: '  ' }] }),
      finish,
    ]);
    expect(answer.toolCalls[0]).toMatchObject({ toolCallId: 'a', input: { path: 'x' } });
    expect(answer.toolCalls.map((call) => call.toolName)).toEqual(['read_file', 'list_files', 'list_files']);
    expect(answer.toolCalls[1].toolCallId).toMatch(/^call_[0-9a-f]{24}$/);
    expect(answer.toolCalls[2].toolCallId).toMatch(/^call_[0-9a-f]{24}$/);
    expect(answer.toolCalls[2].toolCallId).not.toBe(answer.toolCalls[1].toolCallId);
  });

  it('counts reasoning, text and arguments as progress, and keeps only the text', () => {
    const progress: number[] = [];
    const deltas: string[] = [];
    const answer = read(
      [
        chunk({ reasoning_content: 'thinking' }),
        chunk({ content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'more' }] }] }),
        chunk({ content: 'Hi' }),
        chunk({ content: [{ type: 'text', text: '!' }] }),
        chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'read_file', arguments: '{}' } }] }),
        JSON.stringify({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 3 } }),
        finish,
      ],
      {
        onProgress: (chars: number) => progress.push(chars),
        onTextDelta: (text: string) => deltas.push(text),
      },
    );
    expect(answer.text).toBe('Hi!');
    expect(deltas).toEqual(['Hi', '!']);
    expect(progress).toEqual([8, 12, 14, 15, 17]);
    expect(answer.usage).toEqual({
      inputTokens: 10,
      outputTokens: 3,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });

  it('reports a refusal as text and the finish as content-filter', () => {
    const answer = read([
      chunk({ refusal: 'I cannot help with that.' }),
      JSON.stringify({ choices: [{ finish_reason: 'stop' }] }),
    ]);
    expect(answer).toMatchObject({ text: 'I cannot help with that.', finishReason: 'content-filter' });
  });

  it('throws the error object of an error event, and refuses a usage that is not counts', () => {
    expect(() => read([JSON.stringify({ error: { message: 'boom', code: 'x' } })])).toThrow(
      expect.objectContaining({ message: 'boom' }),
    );
    expect(() => read([JSON.stringify({ choices: [], usage: { prompt_tokens: '12' } }), finish])).toThrow(
      /usage is not token counts/,
    );
    expect(() => read([JSON.stringify({ choices: 'none' })])).toThrow(/choices are not a list/);
  });
});
