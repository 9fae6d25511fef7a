/**
 * Issue 29 §2: the read-only commands' HTTP reads on a secured connection, over real HTTPS with mTLS:
 * they present the connection's client certificate, check the server's against its CA and name, and
 * send the API key as a bearer token; without a certificate the API does not answer (the commands then
 * fall back to gRPC, which names the cause); a key is never sent to a plain http address.
 */
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpTemporalReader, httpAccessOf, isHttpApiReachable } from '../../cli/temporal-http';
import { ConfigError } from '../../core/errors';
import { temporalHttpBaseUrl } from '../../worker/settings';
import { resolveTemporalConnection } from '../../worker/temporal-connection';
import { tempDir } from '../support/cli';
import { makeTestPki, type TestPki } from '../support/test-certificates';

const API_KEY = 'tmprl-http-key-31f9a0c2d7';

interface Seen {
  path: string;
  authorization?: string;
  clientCn?: string;
}

let pki: TestPki;
let server: https.Server;
let port: number;
const seen: Seen[] = [];

beforeAll(async () => {
  pki = makeTestPki(path.join(tempDir('http-pki'), 'pki'));
  server = https.createServer(
    {
      cert: fs.readFileSync(pki.serverCert),
      key: fs.readFileSync(pki.serverKey),
      ca: fs.readFileSync(pki.ca),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (request, response) => {
      const peer = (request.socket as TLSSocket).getPeerCertificate();
      seen.push({
        path: request.url ?? '',
        authorization: request.headers.authorization,
        // A certificate may name several CNs; the test's name one.
        clientCn: peer?.subject?.CN?.toString(),
      });
      response.setHeader('content-type', 'application/json');
      if (request.url?.startsWith('/api/v1/system-info')) {
        response.end(JSON.stringify({ serverVersion: '1.30.1' }));
      } else {
        response.end(
          JSON.stringify({
            workflowExecutionInfo: { status: 'WORKFLOW_EXECUTION_STATUS_RUNNING', taskQueue: 'goalrun-q' },
            pendingActivities: [],
          }),
        );
      }
    },
  );
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function settingsOf(vars: Record<string, string>) {
  return resolveTemporalConnection(
    { HOME: tempDir('http-home'), TEMPORAL_ADDRESS: `127.0.0.1:${port}`, ...vars },
    {},
  );
}

describe('the HTTP reads of a secured connection', () => {
  it('present the client certificate and the API key, and read the workflow', async () => {
    const settings = settingsOf({
      TEMPORAL_API_KEY: API_KEY,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca,
      TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey,
      TEMPORAL_TLS_SERVER_NAME: 'localhost',
    });
    // With TLS on, host:port means https.
    const baseUrl = temporalHttpBaseUrl(`127.0.0.1:${port}`, 'https') as string;
    expect(baseUrl).toBe(`https://127.0.0.1:${port}`);
    const access = httpAccessOf(settings, baseUrl);
    expect(await isHttpApiReachable(baseUrl, 5_000, access)).toBe(true);
    const reader = new HttpTemporalReader({ baseUrl, namespace: 'goals.acct', access });
    expect(await reader.describe('goalrun-abc')).toMatchObject({ status: 'RUNNING', taskQueue: 'goalrun-q' });
    expect(seen.map((each) => each.path)).toEqual([
      '/api/v1/system-info',
      expect.stringMatching(/^\/api\/v1\/namespaces\/goals\.acct\/workflows\/goalrun-abc\?/),
    ]);
    for (const each of seen) {
      expect(each.authorization).toBe(`Bearer ${API_KEY}`);
      expect(each.clientCn).toBe('client');
    }
  });

  it('get no answer without a client certificate, or from a server of another CA', async () => {
    seen.length = 0;
    const baseUrl = `https://127.0.0.1:${port}`;
    const noCert = settingsOf({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca });
    expect(await isHttpApiReachable(baseUrl, 5_000, httpAccessOf(noCert, baseUrl))).toBe(false);
    const other = makeTestPki(path.join(tempDir('http-other'), 'pki'));
    const strangeCa = settingsOf({
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: other.ca,
      TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey,
    });
    expect(await isHttpApiReachable(baseUrl, 5_000, httpAccessOf(strangeCa, baseUrl))).toBe(false);
    expect(seen).toEqual([]);
  });

  it('never send an API key to a plain http address', () => {
    const settings = settingsOf({ TEMPORAL_API_KEY: API_KEY });
    const refuse = () => httpAccessOf(settings, `http://127.0.0.1:${port}`);
    expect(refuse).toThrow(ConfigError);
    expect(refuse).toThrow(
      /plain http, and the connection has an API key \(TEMPORAL_API_KEY\): goalrun never sends a key unencrypted/,
    );
    expect(() => refuse()).not.toThrow(API_KEY);
  });
});
