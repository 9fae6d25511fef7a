/**
 * Issue 29 §5: a refused connection names its cause and the setting to fix, for the CLI's gRPC client
 * and the worker's native connection alike, over real TLS handshakes with certificates made by
 * openssl (a client without a certificate, an unknown CA, a wrong server name, a certificate the
 * server refuses, TLS against a plain server and the reverse, an API key refused as Unauthenticated).
 * And §2: the API key reaches the server as a bearer token and never a log line or a message.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type ConnectionProblemKind, problemOf } from '../../worker/connection-errors';
import { installWorkerLogging } from '../../worker/logging';
import { connectClient, connectNative, isLoopbackAddress } from '../../worker/temporal-connect';
import { resolveTemporalConnection, type TemporalConnectionSettings } from '../../worker/temporal-connection';
import { tempDir } from '../support/cli';
import { type GrpcTlsTestServer, startGrpcTlsTestServer } from '../support/grpc-tls-test-server';
import { makeClientCertificate, makeTestPki, type TestPki } from '../support/test-certificates';

const API_KEY = 'tmprl-secret-key-5e1d0c93b2';

let pki: TestPki;
let other: TestPki;
let mtls: GrpcTlsTestServer;
let refusing: GrpcTlsTestServer;
/** The test suite's dev server: a real Temporal frontend without TLS. */
const plainAddress = inject('temporalAddress');

beforeAll(async () => {
  const dir = tempDir('connect-pki');
  pki = makeTestPki(path.join(dir, 'a'));
  other = makeTestPki(path.join(dir, 'b'));
  mtls = await startGrpcTlsTestServer({
    cert: pki.serverCert,
    key: pki.serverKey,
    clientCa: pki.ca,
    requireClientCert: true,
  });
  refusing = await startGrpcTlsTestServer({
    cert: pki.serverCert,
    key: pki.serverKey,
    status: 16,
    message: 'Request unauthorized.',
  });
});

afterAll(async () => {
  await mtls?.close();
  await refusing?.close();
});

/** Settings from TEMPORAL_* variables only (no temporal.toml). */
function settingsOf(vars: Record<string, string>): TemporalConnectionSettings {
  return resolveTemporalConnection({ HOME: tempDir('connect-home'), ...vars }, {});
}

function mtlsVars(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: mtls.address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca,
    TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey,
    ...overrides,
  };
}

/** The error each client fails with. */
async function failuresOf(settings: TemporalConnectionSettings): Promise<{ client: Error; native: Error }> {
  const client = await connectClient(settings, 5_000).then(
    async (connection) => {
      await connection.close();
      throw new Error('the gRPC client connected');
    },
    (err: Error) => err,
  );
  const native = await connectNative(settings).then(
    async (connection) => {
      await connection.close();
      throw new Error('the native connection connected');
    },
    (err: Error) => err,
  );
  return { client, native };
}

async function expectCause(settings: TemporalConnectionSettings, kind: ConnectionProblemKind, says: RegExp) {
  const { client, native } = await failuresOf(settings);
  for (const [which, err] of [
    ['gRPC client', client],
    ['native connection', native],
  ] as const) {
    expect(problemOf(err)?.kind, `${which}: ${err.message}`).toBe(kind);
    expect(err.message, which).toMatch(new RegExp(`^cannot connect to Temporal at ${settings.address}: `));
    expect(err.message, which).toMatch(says);
  }
}

describe('a refused connection names its cause', () => {
  it('connects both clients with the right certificates', async () => {
    const settings = settingsOf(mtlsVars());
    const client = await connectClient(settings, 5_000);
    await client.close();
    const from = mtls.requests.length;
    const native = await connectNative(settings);
    await native.close();
    // The server is on 127.0.0.1: the worker's connection neither sends nor asks for gzip there.
    const nativeRequests = mtls.requests.slice(from);
    expect(nativeRequests.length).toBeGreaterThan(0);
    expect(nativeRequests.filter((request) => request.acceptEncoding?.includes('gzip'))).toEqual([]);
  });

  it('a client without a certificate', async () => {
    const vars = mtlsVars();
    delete vars.TEMPORAL_TLS_CLIENT_CERT_PATH;
    delete vars.TEMPORAL_TLS_CLIENT_KEY_PATH;
    await expectCause(
      settingsOf(vars),
      'client-certificate-required',
      /requires a client certificate .*fix: set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH/,
    );
  });

  it('a client certificate of a CA the server does not trust', async () => {
    const stranger = makeClientCertificate(other, 'stranger');
    await expectCause(
      settingsOf(
        mtlsVars({
          TEMPORAL_TLS_CLIENT_CERT_PATH: stranger.cert,
          TEMPORAL_TLS_CLIENT_KEY_PATH: stranger.key,
        }),
      ),
      'client-certificate-refused',
      new RegExp(`refused the client certificate ${stranger.cert} \\(TEMPORAL_TLS_CLIENT_CERT_PATH\\)`),
    );
  });

  it('a server certificate of a CA this process does not trust', async () => {
    await expectCause(
      settingsOf(mtlsVars({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: other.ca })),
      'unknown-ca',
      new RegExp(
        `not signed by a CA this process trusts \\(server CA: ${other.ca} \\(TEMPORAL_TLS_SERVER_CA_CERT_PATH\\)\\); fix: set TEMPORAL_TLS_SERVER_CA_CERT_PATH`,
      ),
    );
  });

  it('a server name the certificate does not hold', async () => {
    await expectCause(
      settingsOf(mtlsVars({ TEMPORAL_TLS_SERVER_NAME: 'temporal.example' })),
      'server-name',
      /not valid for the name temporal\.example \(TEMPORAL_TLS_SERVER_NAME\): it names .*localhost.*; fix: set TEMPORAL_TLS_SERVER_NAME/,
    );
  });

  it('TLS against a plain Temporal server, and no TLS against a TLS server', async () => {
    await expectCause(
      settingsOf({ TEMPORAL_ADDRESS: plainAddress, TEMPORAL_TLS: 'true' }),
      'server-not-tls',
      /TLS is on \(TEMPORAL_TLS\), but the server .* does not speak TLS; fix: set TEMPORAL_TLS=false/,
    );
    const err = await connectClient(settingsOf({ TEMPORAL_ADDRESS: mtls.address }), 3_000).catch(
      (e: Error) => e,
    );
    expect(problemOf(err)?.kind, (err as Error).message).toBe('server-needs-tls');
  });
});

describe('an API key', () => {
  it('reaches the server as a bearer token, and a refusal names it without ever showing it', async () => {
    installWorkerLogging({ level: 'debug' });
    const written: string[] = [];
    const streams = [process.stdout, process.stderr] as const;
    const originals = streams.map((stream) => stream.write.bind(stream));
    for (const stream of streams) {
      stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        written.push(String(chunk));
        return (originals[streams.indexOf(stream)] as (...args: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof stream.write;
    }
    let failures: { client: Error; native: Error };
    try {
      failures = await failuresOf(
        settingsOf({
          TEMPORAL_ADDRESS: refusing.address,
          TEMPORAL_API_KEY: API_KEY,
          TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca,
        }),
      );
    } finally {
      streams.forEach((stream, index) => {
        stream.write = originals[index] as typeof stream.write;
      });
    }
    // Both connections sent it (the gRPC client, then the worker's).
    const sent = refusing.requests.filter((request) => request.authorization === `Bearer ${API_KEY}`);
    expect(sent.length).toBeGreaterThanOrEqual(2);
    for (const err of [failures.client, failures.native]) {
      expect(problemOf(err)?.kind, err.message).toBe('unauthenticated');
      expect(err.message).toMatch(
        /the server refused the API key \(TEMPORAL_API_KEY\): Unauthenticated; fix: /,
      );
      expect(err.message).not.toContain(API_KEY);
    }
    expect(written.join('')).not.toContain(API_KEY);
  });
});

describe('a loopback address', () => {
  it('is localhost, 127.0.0.0/8 or ::1, with or without a port', () => {
    for (const address of ['localhost:7233', '127.0.0.1:7233', '127.3.2.1', 'LOCALHOST', '[::1]:7233', '::1'])
      expect(isLoopbackAddress(address), address).toBe(true);
    for (const address of [
      'temporal:7233',
      '10.0.0.5:7233',
      'my.tmprl.cloud:7233',
      '[2001:db8::1]:7233',
      '128.0.0.1',
    ])
      expect(isLoopbackAddress(address), address).toBe(false);
  });
});
