/**
 * Issue 20, §5: the codec server's protocol over real HTTP (cli/codec-server.ts): Temporal's
 * `{payloads: [...]}` both ways, CORS as the Web UI's preflight asks for it, the bearer token, and
 * one clear answer to a bad request. The built command is run against a real Web UI in
 * test/e2e/web-ui-codec.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CodecServer, startCodecServer } from '../../cli/codec-server';
import type { PayloadKey } from '../../worker/payload-keys';

const UI = 'http://127.0.0.1:8233';
const TOKEN = 'a-test-token';
const b64 = (text: string) => Buffer.from(text).toString('base64');
const jsonPayload = (value: unknown) => ({
  metadata: { encoding: b64('json/plain') },
  data: b64(JSON.stringify(value)),
});

describe('the codec server', () => {
  const keys: PayloadKey[] = [
    { id: 'new', key: randomBytes(32) },
    { id: 'old', key: randomBytes(32) },
  ];
  let server: CodecServer;
  let oldServer: CodecServer;
  const logged: string[] = [];
  beforeAll(async () => {
    server = await startCodecServer({
      host: '127.0.0.1',
      port: 0,
      keys,
      token: TOKEN,
      corsOrigins: [UI],
      log: (line) => logged.push(line),
    });
    oldServer = await startCodecServer({ host: '127.0.0.1', port: 0, keys: [keys[1]], corsOrigins: [UI] });
  });
  afterAll(async () => {
    await server?.close();
    await oldServer?.close();
  });

  const call = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('encrypts with the first key and decrypts with any listed key', async () => {
    const encoded = await (await call(server.url, '/encode', { payloads: [jsonPayload({ a: 1 })] })).json();
    const [sealed] = encoded.payloads;
    expect(Buffer.from(sealed.metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
    expect(Buffer.from(sealed.metadata['encryption-key-id'], 'base64').toString()).toBe('new');
    const decoded = await (await call(server.url, '/decode', encoded)).json();
    expect(decoded.payloads).toEqual([jsonPayload({ a: 1 })]);
    // Sealed by a server that has only the old key: still opened after rotation.
    const old = await (await call(oldServer.url, '/encode', { payloads: [jsonPayload('kept')] })).json();
    expect((await (await call(server.url, '/decode', old)).json()).payloads).toEqual([jsonPayload('kept')]);
  });

  it('leaves a payload it has no key for sealed, and decodes the others of the page', async () => {
    const foreign = await startCodecServer({
      host: '127.0.0.1',
      port: 0,
      keys: [{ id: 'foreign', key: randomBytes(32) }],
      corsOrigins: [],
    });
    const [sealed] = (await (await call(foreign.url, '/encode', { payloads: [jsonPayload('x')] })).json())
      .payloads;
    await foreign.close();
    const answer = await (
      await call(server.url, '/decode', { payloads: [sealed, jsonPayload('plain')] })
    ).json();
    expect(answer.payloads).toEqual([sealed, jsonPayload('plain')]);
    expect(logged.some((line) => line.includes('key "foreign"'))).toBe(true);
  });

  it("answers the Web UI's preflight for its origin only, and every answer carries the CORS headers", async () => {
    const preflight = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: UI,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace,authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(UI);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/x-namespace.*content-type/);
    const other = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.test' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const refused = await call(
      server.url,
      '/decode',
      { payloads: [] },
      { origin: UI, authorization: 'Bearer no' },
    );
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(UI);
  });

  it('answers a bad request with one line saying what is wrong', async () => {
    const cases: Array<[string, unknown, number, RegExp]> = [
      ['/decode', 'not json', 400, /not JSON/],
      ['/decode', { nothing: true }, 400, /no "payloads" list/],
      ['/decode', { payloads: [{ data: 'x' }] }, 400, /payloads\[0\] is not a payload/],
      ['/elsewhere', { payloads: [] }, 404, /POST \/encode and POST \/decode/],
    ];
    for (const [path, body, status, message] of cases) {
      const answer = await call(server.url, path, body);
      expect(answer.status, path).toBe(status);
      expect((await answer.json()).error).toMatch(message);
    }
  });
});
