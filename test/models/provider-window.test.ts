/** Provider-reported windows: Ollama's /api/show over real HTTP, and the fallback to the card. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ollamaWindowOf, providerReportedWindow } from '../../activities/models/provider-window';

describe('ollamaWindowOf', () => {
  it('prefers the num_ctx parameter, then the trained context length', () => {
    expect(
      ollamaWindowOf({
        parameters: 'stop "<|eot|>"\nnum_ctx 8192',
        model_info: { 'llama.context_length': 131072 },
      }),
    ).toBe(8192);
    expect(
      ollamaWindowOf({ model_info: { 'general.architecture': 'llama', 'llama.context_length': 131072 } }),
    ).toBe(131072);
    expect(ollamaWindowOf({})).toBeUndefined();
    expect(ollamaWindowOf('nonsense')).toBeUndefined();
  });
});

describe('providerReportedWindow', () => {
  let server: Server;
  let base: string;
  const asked: unknown[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        asked.push({ path: request.url, body: JSON.parse(body || '{}') });
        if (request.url !== '/api/show') {
          response.writeHead(404).end();
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ parameters: 'num_ctx 16384', model_info: { 'llama.context_length': 131072 } }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const inActivity = <T>(fn: () => Promise<T>) => new MockActivityEnvironment().run(fn);

  it("asks Ollama's native API beside its /v1 endpoint", async () => {
    const window = await inActivity(() =>
      providerReportedWindow('ollama:llama3.1', { OLLAMA_BASE_URL: `${base}/v1` }),
    );
    expect(window).toBe(16384);
    expect(asked.at(-1)).toEqual({ path: '/api/show', body: { model: 'llama3.1' } });
  });

  it('reports nothing for providers without such an API, or when Ollama does not answer', async () => {
    expect(await inActivity(() => providerReportedWindow('scripted:/x.json', {}))).toBeUndefined();
    expect(
      await inActivity(() =>
        providerReportedWindow('ollama:llama3.1', { OLLAMA_BASE_URL: 'http://127.0.0.1:1/v1' }),
      ),
    ).toBeUndefined();
  });
});
