/**
 * A TLS gRPC endpoint for connection tests: a real HTTP/2 server with a real handshake (mTLS when
 * asked) that answers every call with an empty message, or with a gRPC status such as 16
 * UNAUTHENTICATED, the way a secured Temporal frontend refuses a key. It records the requests' paths
 * authorization and compression headers. The SDK's clients treat an empty message as a valid GetSystemInfo answer.
 */
import fs from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

/** How the endpoint behaves. */
export interface GrpcTlsTestServerOptions {
  cert: string;
  key: string;
  /** The CA client certificates must be signed by; with `requireClientCert`. */
  clientCa?: string;
  requireClientCert?: boolean;
  /** Answer every call with this gRPC status (0: an empty message). */
  status?: number;
  message?: string;
}

/** One request as the server saw it. */
export interface SeenRequest {
  path: string;
  authorization?: string;
  /** `grpc-accept-encoding`: the compressions the client takes in answers ("gzip" when it asks for them). */
  acceptEncoding?: string;
}

/** A running endpoint. */
export interface GrpcTlsTestServer {
  address: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** Starts the endpoint on 127.0.0.1 and a free port. */
export function startGrpcTlsTestServer(options: GrpcTlsTestServerOptions): Promise<GrpcTlsTestServer> {
  const requests: SeenRequest[] = [];
  const server = http2.createSecureServer({
    cert: fs.readFileSync(options.cert),
    key: fs.readFileSync(options.key),
    ...(options.clientCa ? { ca: fs.readFileSync(options.clientCa) } : {}),
    requestCert: options.requireClientCert === true,
    rejectUnauthorized: options.requireClientCert === true,
  });
  server.on('stream', (stream, headers) => {
    const authorization = headers.authorization;
    const acceptEncoding = headers['grpc-accept-encoding'];
    requests.push({
      path: String(headers[':path']),
      ...(typeof authorization === 'string' ? { authorization } : {}),
      ...(typeof acceptEncoding === 'string' ? { acceptEncoding } : {}),
    });
    const status = options.status ?? 0;
    if (status !== 0) {
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': String(status),
          'grpc-message': encodeURIComponent(options.message ?? 'refused'),
        },
        { endStream: true },
      );
      return;
    }
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    // One gRPC message of length 0: not compressed, empty.
    stream.end(Buffer.from([0, 0, 0, 0, 0]));
  });
  // Handshakes the test means to fail are not errors of the server.
  server.on('tlsClientError', () => undefined);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        address: `127.0.0.1:${port}`,
        requests,
        close: () =>
          new Promise<void>((done) => {
            for (const session of sessions) session.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
