/**
 * Certificates for TLS tests, made with openssl by scripts/make-tls-certs.sh, the script
 * docker-compose.tls.yml tells operators to run: a CA, a server certificate for temporal, localhost
 * and 127.0.0.1, and client certificates signed by the CA. Valid for two days.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../scripts/make-tls-certs.sh');

/** A CA and what it signed, as PEM files. */
export interface TestPki {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

function run(dir: string, clients: string[]): void {
  execFileSync('bash', [SCRIPT, dir, ...clients], {
    env: { ...process.env, TLS_DAYS: '2' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

/** A client certificate (clientAuth) signed by the PKI's CA. */
export function makeClientCertificate(pki: TestPki, name: string): { cert: string; key: string } {
  run(pki.dir, [name]);
  return { cert: path.join(pki.dir, `${name}.pem`), key: path.join(pki.dir, `${name}.key`) };
}

/** A new CA in `dir`, the server's certificate, and one client certificate (`client`). */
export function makeTestPki(dir: string): TestPki {
  run(dir, ['client']);
  return {
    dir,
    ca: path.join(dir, 'ca.pem'),
    serverCert: path.join(dir, 'server.pem'),
    serverKey: path.join(dir, 'server.key'),
    clientCert: path.join(dir, 'client.pem'),
    clientKey: path.join(dir, 'client.key'),
  };
}
