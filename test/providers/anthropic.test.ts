import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createModelClient, type ModelRequest } from '../../activities/providers';
import { FailureType } from '../../core/errors';
import { type StoredMessage, userText } from '../../core/messages';

/**
 * The Anthropic Messages API speaks its own SSE dialect, so this file carries a tiny stub of it:
 * enough to check the prompt goalrun sends (tool inputs as objects) and the usage it reads back.
 */

type StubAnswer = { events: Array<[string, object]> } | { status: number; body: object };

let server: Server;
let baseUrl: string;
let answer: StubAnswer;
let lastBody: {
  system?: Array<{ text: string; cache_control?: object }>;
  messages: Array<{ role: string; content: unknown }>;
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      lastBody = JSON.parse(raw);
      if ('status' in answer) {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const [event, data] of answer.events)
        res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  answer = { events: [] };
});

function client() {
  return createModelClient('anthropic:claude-test', {
    baseUrl,
    env: { ANTHROPIC_API_KEY: 'test-anthropic-key' },
  });
}

function request(messages: StoredMessage[]): ModelRequest {
  return { system: 'sys', messages, tools: [], stepNumber: 1, abortSignal: new AbortController().signal };
}

function toolUseTurn(partialJson: string[]): Array<[string, object]> {
  return [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-test',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: 20,
            output_tokens: 1,
            cache_creation_input_tokens: 3,
            cache_read_input_tokens: 100,
          },
        },
      },
    ],
    [
      'content_block_start',
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ],
    [
      'content_block_delta',
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me ' } },
    ],
    [
      'content_block_delta',
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'look.' } },
    ],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    [
      'content_block_start',
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} },
      },
    ],
    ...partialJson.map((piece): [string, object] => [
      'content_block_delta',
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: piece } },
    ]),
    ['content_block_stop', { type: 'content_block_stop', index: 1 }],
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 15 },
      },
    ],
    ['message_stop', { type: 'message_stop' }],
  ];
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('Anthropic over HTTP', () => {
  it('reads text, a tool call and cache usage', async () => {
    answer = { events: toolUseTurn(['{"comm', 'and": "ls -la"}']) };
    const response = await client().stream(request([userText('list files')]));
    expect(response.text).toBe('Let me look.');
    expect(response.toolCalls).toEqual([
      { type: 'tool-call', toolCallId: 'toolu_1', toolName: 'bash', input: { command: 'ls -la' } },
    ]);
    expect(response.finishReason).toBe('tool-calls');
    // Anthropic reports cache reads and writes apart from input_tokens; goalrun's input is the total.
    expect(response.usage).toEqual({
      inputTokens: 123,
      outputTokens: 15,
      cacheReadTokens: 100,
      cacheWriteTokens: 3,
    });
  });

  it('hands each text delta to onTextDelta as it streams, in order (--include-partial-messages)', async () => {
    answer = { events: toolUseTurn(['{}']) };
    const deltas: string[] = [];
    const response = await client().stream({
      ...request([userText('list files')]),
      onTextDelta: (text) => deltas.push(text),
    });
    expect(deltas).toEqual(['Let me ', 'look.']);
    expect(deltas.join('')).toBe(response.text);
  });

  it('sends an --image of the first message as an image block with its bytes', async () => {
    answer = { events: toolUseTurn(['{}']) };
    const data = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    await client().stream({
      ...request([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image', imageId: 1, mediaType: 'image/png', bytes: data.length, name: 'a.png' },
          ],
        },
      ]),
      images: new Map([[1, { mediaType: 'image/png', data }]]),
    });
    const content = lastBody.messages[0].content as Array<Record<string, unknown>>;
    expect(content[0]).toMatchObject({ type: 'text', text: 'what is this?' });
    expect(content[1]).toMatchObject({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: Buffer.from(data).toString('base64') },
    });
  });

  it('sends cache breakpoints on the system prompt and the last message, and the tail after them', async () => {
    const events = toolUseTurn(['{}']);
    // Anthropic splits the writes by lifetime in its raw usage; the 1-hour ones are priced apart.
    (events[0][1] as { message: { usage: object } }).message.usage = {
      input_tokens: 20,
      output_tokens: 1,
      cache_creation_input_tokens: 300,
      cache_read_input_tokens: 1000,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 300 },
    };
    answer = { events };
    const response = await client().stream({
      ...request([userText('the objective'), userText('go on')]),
      tail: '[goalrun] Your current task list: [ ] a',
      cache: { headCount: 1, ttl: '1h' },
    });
    const hour = { type: 'ephemeral', ttl: '1h' };
    expect(lastBody.system).toEqual([{ type: 'text', text: 'sys', cache_control: hour }]);
    // Consecutive user messages are one user turn: the transcript's blocks, then the tail's, unmarked.
    expect(lastBody.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'the objective', cache_control: hour },
          { type: 'text', text: 'go on', cache_control: hour },
          { type: 'text', text: '[goalrun] Your current task list: [ ] a' },
        ],
      },
    ]);
    expect(response.usage).toEqual({
      inputTokens: 1320,
      outputTokens: 15,
      cacheReadTokens: 1000,
      cacheWriteTokens: 300,
      cacheWrite1hTokens: 300,
    });
  });

  it('keeps malformed tool input raw', async () => {
    answer = { events: toolUseTurn(['{"command": ']) };
    const response = await client().stream(request([userText('list files')]));
    expect(response.toolCalls[0].input).toBe('{"command": ');
  });

  it('sends stored malformed tool input as an object, and no empty text blocks', async () => {
    answer = { events: toolUseTurn(['{}']) };
    await client().stream(
      request([
        userText('go'),
        {
          role: 'assistant',
          content: [
            { type: 'text', text: '' },
            { type: 'tool-call', toolCallId: 'toolu_0', toolName: 'bash', input: '{"command": ' },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'toolu_0',
              toolName: 'bash',
              output: { type: 'error-text', value: 'arguments are not valid JSON' },
            },
          ],
        },
      ]),
    );
    expect(lastBody.system).toEqual([{ type: 'text', text: 'sys' }]);
    expect(lastBody.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_0', name: 'bash', input: {} }],
    });
  });

  it('maps 529 overloaded to a retryable ProviderUnavailable', async () => {
    answer = {
      status: 529,
      body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    };
    const failure = await failureOf(client().stream(request([userText('x')])));
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toBe('anthropic model claude-test: HTTP 529: Overloaded');
  });

  it('maps "prompt is too long" to ContextOverflow', async () => {
    answer = {
      status: 400,
      body: {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens' },
      },
    };
    const failure = await failureOf(client().stream(request([userText('x')])));
    expect(failure.type).toBe(FailureType.ContextOverflow);
  });

  it('maps an error event in the stream to a retryable failure', async () => {
    answer = {
      events: [
        toolUseTurn([])[0],
        ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
      ],
    };
    const failure = await failureOf(client().stream(request([userText('x')])));
    expect(failure.type).toBe(FailureType.ProviderUnavailable);
    expect(failure.nonRetryable).toBe(false);
  });
});
