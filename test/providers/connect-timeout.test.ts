/**
 * A provider whose address takes the connection and never completes it: the Chat Completions client
 * gives up after CONNECT_TIMEOUT_MS and counts it as unreachable, as undici's fetch did. The address
 * is a real listener whose accept queue is full (its process never accepts), so the kernel drops
 * the client's SYN and `connect` waits, as it would for a host that drops packets.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { APICallError } from '@ai-sdk/provider';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatCompletionsClient } from '../../activities/providers/chat-completions/client';
import { CONNECT_TIMEOUT_MS, postJson } from '../../activities/providers/chat-completions/http-post';
import { isUnreachableError } from '../../activities/providers/errors';
import { userText } from '../../core/messages';

// Linux queues backlog + 1 finished handshakes for a listener that does not accept.
const BACKLOG = 1;
const QUEUED = BACKLOG + 1;
const HOLDER = `
const server = require('node:net').createServer();
server.listen({ port: 0, host: '127.0.0.1', backlog: ${BACKLOG} }, () => {
  process.stdout.write(server.address().port + '\\n', () => {
    // Block the event loop: nothing is ever accepted, so the queue stays full.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  });
});
`;

let holder: ChildProcess;
let port: number;
const fillers: Socket[] = [];

beforeAll(async () => {
  holder = spawn(process.execPath, ['-e', HOLDER], { stdio: ['ignore', 'pipe', 'inherit'] });
  port = await new Promise<number>((resolve, reject) => {
    holder.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    holder.once('exit', (code) => reject(new Error(`the holder exited (${code})`)));
  });
  for (let i = 0; i < QUEUED; i++) {
    const socket = connect(port, '127.0.0.1');
    fillers.push(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
  }
});

afterAll(() => {
  for (const socket of fillers) socket.destroy();
  holder.kill('SIGKILL');
});

describe('a connection that never completes', { timeout: CONNECT_TIMEOUT_MS + 20_000 }, () => {
  it('fails after the connect timeout, as unreachable, from postJson and from the client', async () => {
    const url = new URL(`http://127.0.0.1:${port}/v1/chat/completions`);
    const started = Date.now();
    const [posted, streamed] = await Promise.allSettled([
      postJson(url, {}, '{}', new AbortController().signal),
      createChatCompletionsClient(
        'openai-compatible:m',
        'm',
        { baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-connect-timeout' },
        { provider: 'openai-compatible', model: 'm', secrets: ['sk-connect-timeout'] },
      ).stream({
        system: 'You are a test.',
        messages: [userText('hello')],
        tools: [],
        stepNumber: 1,
        abortSignal: new AbortController().signal,
      }),
    ]);
    // Not sooner: the timer, not some other failure, ended both.
    expect(Date.now() - started).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS - 100);

    expect(posted.status).toBe('rejected');
    const error = (posted as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(APICallError);
    expect(error.message).toBe(
      `Cannot connect to API: connect timed out after ${CONNECT_TIMEOUT_MS / 1000} s`,
    );
    expect(error.isRetryable).toBe(true);
    expect(isUnreachableError(error)).toBe(true);

    expect(streamed.status).toBe('rejected');
    const failure = (streamed as PromiseRejectedResult).reason;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'ProviderUnavailable', nonRetryable: false });
    expect(failure.message).toContain('connect timed out after');
    expect(failure.message).not.toContain('sk-connect-timeout');
  });
});
