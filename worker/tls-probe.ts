/**
 * goalrun's own TCP and TLS handshake with a Temporal frontend, with the settings' certificates: it
 * tells what the SDK's clients do not (worker/connection-errors.ts). With TLS on it presents the same
 * CA, client certificate and server name, then sends HTTP/2's preface: a server that refuses the client
 * certificate says so (TLS 1.3) only after the handshake, on the first read. With TLS off it tries a
 * handshake anyway, to tell a TLS server apart.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { ProbeResult } from './connection-errors';
import type { TlsMaterial } from './connection-options';

/** How long the probe waits for each of connecting and the server's first word. */
export const TLS_PROBE_TIMEOUT_MS = 5_000;

/** HTTP/2's client preface and an empty SETTINGS frame: a gRPC server answers with its SETTINGS. */
const HTTP2_PREFACE = Buffer.concat([
  Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
  Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
]);

/** Host and port of `host:port` or `[v6]:port` (7233 when no port is given). */
export function hostAndPort(address: string): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(address.trim());
  if (bracketed) return { host: bracketed[1], port: Number(bracketed[2] ?? 7233) };
  const parts = address.trim().split(':');
  if (parts.length === 2) return { host: parts[0], port: Number(parts[1]) };
  return { host: address.trim(), port: 7233 };
}

function tcpConnect(host: string, port: number, timeoutMs: number): Promise<net.Socket | string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(`no answer within ${timeoutMs} ms`);
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(err.code ?? err.message);
    });
  });
}

/** Probes `address` with the settings' TLS material (null: TLS off). Never rejects. */
export async function probeTls(
  address: string,
  material: TlsMaterial | null,
  timeoutMs: number = TLS_PROBE_TIMEOUT_MS,
): Promise<ProbeResult> {
  const { host, port } = hostAndPort(address);
  const socket = await tcpConnect(host, port, timeoutMs);
  if (typeof socket === 'string') return { kind: 'unreachable', reason: socket };
  // Node warns when the TLS server name is an IP address; without a name it checks the IP itself.
  const servername = material?.serverName ?? (net.isIP(host) ? undefined : host);
  return new Promise<ProbeResult>((resolve) => {
    let handshaken = false;
    let settled = false;
    const secure = tls.connect({
      socket,
      ALPNProtocols: ['h2'],
      ...(servername ? { servername } : {}),
      ...(material
        ? {
            ca: material.ca,
            cert: material.cert,
            key: material.key,
            ...(material.serverName
              ? {
                  checkServerIdentity: (_host: string, cert: tls.PeerCertificate) =>
                    tls.checkServerIdentity(material.serverName as string, cert),
                }
              : {}),
          }
        : { rejectUnauthorized: false }),
    });
    const finish = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      secure.destroy();
      resolve(result);
    };
    // A server that neither completes nor refuses in time says nothing certain: the SDK's error stands.
    const timer = setTimeout(
      () => finish(material ? { kind: 'answered' } : { kind: 'speaks-plain' }),
      timeoutMs,
    );
    secure.once('secureConnect', () => {
      handshaken = true;
      if (!material) {
        finish({ kind: 'speaks-tls' });
        return;
      }
      secure.write(HTTP2_PREFACE);
    });
    secure.on('data', () => finish({ kind: 'answered' }));
    secure.once('error', (err: NodeJS.ErrnoException) => {
      if (!material) finish({ kind: 'speaks-plain' });
      else finish({ kind: 'handshake-failed', code: err.code ?? 'ERR_TLS', message: err.message });
    });
    secure.once('close', () => {
      if (!material) finish({ kind: 'speaks-plain' });
      else
        finish(
          handshaken
            ? { kind: 'closed-after-handshake' }
            : {
                kind: 'handshake-failed',
                code: 'ECONNRESET',
                message: 'the server closed the connection during the TLS handshake',
              },
        );
    });
  });
}
