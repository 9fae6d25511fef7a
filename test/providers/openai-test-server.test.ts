import { afterEach, describe, expect, it } from 'vitest';
import { type OpenAITestServer, requestStep, startOpenAITestServer } from '../support/openai-test-server';

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function post(url: string, body: object): Promise<Response> {
  return fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The JSON payloads of an SSE body, `[DONE]` as a string. */
async function events(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice('data: '.length))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}

describe('openai test server', () => {
  it('streams text and tool arguments in several chunks, then finish, usage and [DONE]', async () => {
    server = await startOpenAITestServer();
    server.enqueue({
      text: 'Hello, world!',
      toolCalls: [{ name: 'bash', args: { command: 'ls -la' } }],
      usage: { prompt_tokens: 9, completion_tokens: 4 },
    });
    const response = await post(server.url, {
      model: 'm',
      messages: [],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const payloads = (await events(response)) as Array<{
      choices: Array<{
        delta: { content?: string; tool_calls?: Array<{ function: { arguments?: string } }> };
      }>;
      usage?: unknown;
    }>;

    const deltas = payloads.slice(0, -1).flatMap((payload) => payload.choices.map((choice) => choice.delta));
    const textPieces = deltas.map((delta) => delta.content).filter((content) => typeof content === 'string');
    expect(textPieces.length).toBeGreaterThanOrEqual(3);
    expect(textPieces.join('')).toBe('Hello, world!');
    const argPieces = deltas
      .flatMap((delta) => delta.tool_calls ?? [])
      .map((call) => call.function.arguments)
      .filter((args) => args);
    expect(argPieces.length).toBeGreaterThanOrEqual(3);
    expect(argPieces.join('')).toBe('{"command":"ls -la"}');

    expect(payloads.at(-1)).toBe('[DONE]');
    expect(payloads.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 4 } });
    expect(payloads.at(-3)).toMatchObject({ choices: [{ finish_reason: 'tool_calls' }] });
  });

  it('sends no usage chunk unless asked', async () => {
    server = await startOpenAITestServer();
    server.enqueue({ text: 'hi' });
    const payloads = await events(await post(server.url, { model: 'm', messages: [], stream: true }));
    expect(payloads.some((payload) => typeof payload === 'object' && 'usage' in (payload as object))).toBe(
      false,
    );
  });

  it('answers non-streaming requests with one chat.completion', async () => {
    server = await startOpenAITestServer();
    server.enqueue({ text: 'plain', toolCalls: [{ name: 'bash', argsRaw: '{bad' }] });
    const body = await (await post(server.url, { model: 'm', messages: [] })).json();
    expect(body).toMatchObject({
      object: 'chat.completion',
      choices: [
        {
          message: {
            role: 'assistant',
            content: 'plain',
            tool_calls: [{ function: { name: 'bash', arguments: '{bad' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
    });
  });

  it('records requests with their time and parsed body', async () => {
    server = await startOpenAITestServer();
    server.enqueue({ text: 'a' });
    const before = Date.now();
    await post(server.url, { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(server.requests[0].time).toBeGreaterThanOrEqual(before);
    expect(server.requests[0].body.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('simulates a prefix cache: leading blocks an earlier request had are reads, the rest writes', async () => {
    server = await startOpenAITestServer({ promptCache: { minTokens: 10 } });
    server.setFallback(() => ({ text: 'ok' }));
    const system = { role: 'system', content: 'x'.repeat(200) };
    const first = { role: 'user', content: 'y'.repeat(100) };
    const usageOf = async (messages: object[]) => {
      const response = await post(server!.url, { model: 'm', messages });
      return ((await response.json()) as { usage: Record<string, unknown> }).usage;
    };
    const tokens = (block: object) => Math.ceil(JSON.stringify(block).length / 4);
    const next = { role: 'user', content: 'next' };
    const head = 1 + tokens(system) + tokens(first); // the tool schemas ("[]") are the first block
    expect(await usageOf([system, first])).toMatchObject({
      prompt_tokens: head,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: head },
    });
    expect(await usageOf([system, first, next])).toMatchObject({
      prompt_tokens: head + tokens(next),
      prompt_tokens_details: { cached_tokens: head, cache_write_tokens: tokens(next) },
    });
    // A changed system message: only the tool schemas match, under the minimum, so nothing is read.
    expect(await usageOf([{ ...system, content: 'z' }, first])).toMatchObject({
      prompt_tokens_details: { cached_tokens: 0 },
    });
    expect(server.cacheUsage.map((usage) => usage.cachedTokens)).toEqual([0, head, 0]);
    expect(server.requests[0].raw).toBe(JSON.stringify({ model: 'm', messages: [system, first] }));
  });

  it('sends queued errors with their status, headers and body', async () => {
    server = await startOpenAITestServer();
    server.enqueue({ status: 429, headers: { 'Retry-After': '2' } }, { status: 503, body: 'down' });
    const limited = await post(server.url, { model: 'm', messages: [] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(await limited.json()).toMatchObject({ error: { message: 'Too Many Requests' } });
    const down = await post(server.url, { model: 'm', messages: [] });
    expect(down.status).toBe(503);
    expect(await down.text()).toBe('down');
  });

  it('uses the fallback when the queue is empty, and answers 400 without one', async () => {
    server = await startOpenAITestServer();
    const empty = await post(server.url, { model: 'm', messages: [] });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('no response queued');

    server.setFallback((body) => ({ text: `step ${requestStep(body)}` }));
    const reply = (await (
      await post(server.url, {
        model: 'm',
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: 'one' },
        ],
      })
    ).json()) as { choices: Array<{ message: { content: string } }> };
    expect(reply.choices[0].message.content).toBe('step 2');
  });

  it('answers 404 for other routes', async () => {
    server = await startOpenAITestServer();
    expect((await fetch(`${server.url}/models`)).status).toBe(404);
  });

  it('closes promptly even with a stream paused by delayMs', async () => {
    server = await startOpenAITestServer();
    // Paused for longer than the test may run: close() can only return by cutting the stream.
    server.enqueue({ text: 'slow', delayMs: 600_000 });
    const response = await post(server.url, { model: 'm', messages: [], stream: true });
    const reading = response.text().catch(() => 'cut');
    await server.close();
    server = undefined;
    expect(await reading).not.toContain('[DONE]');
  });
});
