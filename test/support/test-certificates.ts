/**
 * Certificates for TLS tests, made with `openssl` as an operator would: a CA, a server certificate for
 * localhost and 127.0.0.1, and client certificates signed by the CA. Valid for two days.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** A CA and what it signed, as PEM files. */
export interface TestPki {
  dir: string;
  ca: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

const DAYS = '2';

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A key and a certificate signed by the CA, with these X.509 v3 extensions. */
function signed(
  pki: { dir: string; ca: string; caKey: string },
  name: string,
  cn: string,
  extensions: string,
) {
  const key = path.join(pki.dir, `${name}.key`);
  const cert = path.join(pki.dir, `${name}.pem`);
  const csr = path.join(pki.dir, `${name}.csr`);
  const ext = path.join(pki.dir, `${name}.ext`);
  openssl(
    ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', key, '-out', csr],
    pki.dir,
  );
  fs.writeFileSync(ext, extensions);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      pki.ca,
      '-CAkey',
      pki.caKey,
      '-CAcreateserial',
      '-days',
      DAYS,
      '-out',
      cert,
      '-extfile',
      ext,
    ],
    pki.dir,
  );
  return { cert, key };
}

/** A client certificate (clientAuth) signed by the PKI's CA. */
export function makeClientCertificate(pki: TestPki, name: string): { cert: string; key: string } {
  return signed(pki, name, name, 'extendedKeyUsage=clientAuth\n');
}

/** A new CA in `dir`, a server certificate for localhost and 127.0.0.1, and one client certificate. */
export function makeTestPki(dir: string): TestPki {
  fs.mkdirSync(dir, { recursive: true });
  const ca = path.join(dir, 'ca.pem');
  const caKey = path.join(dir, 'ca.key');
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      DAYS,
      '-subj',
      `/CN=goalrun test CA ${path.basename(dir)}`,
      '-keyout',
      caKey,
      '-out',
      ca,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  const base = { dir, ca, caKey };
  const server = signed(
    base,
    'server',
    'localhost',
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n',
  );
  const pki = { ...base, serverCert: server.cert, serverKey: server.key, clientCert: '', clientKey: '' };
  const client = makeClientCertificate(pki, 'client');
  return { ...pki, clientCert: client.cert, clientKey: client.key };
}
