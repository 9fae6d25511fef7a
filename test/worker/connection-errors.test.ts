/**
 * Issue 29 §5, the pure part: the cause read from the texts the SDK's two clients and Node's TLS
 * give (recorded from real handshakes), each worded with the setting to fix and where it came from.
 */
import { describe, expect, it } from 'vitest';
import { connectionProblem, explainedError, TemporalConnectionError } from '../../worker/connection-errors';
import { resolveTemporalConnection } from '../../worker/temporal-connection';

const HOME = '/nonexistent-home';
const mtls = resolveTemporalConnection(
  {
    HOME,
    TEMPORAL_ADDRESS: '127.0.0.1:7233',
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/certs/ca.pem',
    TEMPORAL_TLS_CLIENT_CERT_PATH: '/certs/client.pem',
    TEMPORAL_TLS_CLIENT_KEY_PATH: '/certs/client.key',
  },
  {},
);
const keyed = resolveTemporalConnection(
  {
    HOME,
    TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
    TEMPORAL_NAMESPACE: 'ns.acct',
    TEMPORAL_API_KEY: 'k-123456789',
  },
  {},
);

/** The Rust core's messages (tonic, rustls), as NativeConnection.connect rejects with them. */
const NATIVE = {
  certificateRequired:
    'Failed to call GetSystemInfo: code: \'Unknown error\', message: "transport error", source: tonic::transport::Error(Transport, hyper::Error(Io, Custom { kind: InvalidData, error: "received fatal alert: CertificateRequired" }))',
  unknownIssuer:
    'tonic::transport::Error(Transport, ConnectError(Custom { kind: InvalidData, error: InvalidCertificate(UnknownIssuer) }))',
  badSignature:
    'tonic::transport::Error(Transport, ConnectError(Custom { kind: InvalidData, error: InvalidCertificate(BadSignature) }))',
  wrongName:
    'tonic::transport::Error(Transport, ConnectError(Custom { kind: InvalidData, error: InvalidCertificate(NotValidForNameContext { expected: DnsName("temporal.example"), presented: ["DnsName(\\"localhost\\")", "IpAddress(127.0.0.1)"] }) }))',
  unauthenticated:
    'Failed to call GetSystemInfo: code: \'The request does not have valid authentication credentials\', message: "Request unauthorized."',
  badCertificate:
    'tonic::transport::Error(Transport, hyper::Error(Io, Custom { kind: InvalidData, error: "received fatal alert: BadCertificate" }))',
  refused:
    'tonic::transport::Error(Transport, ConnectError(ConnectError("tcp connect error", Os { code: 111, kind: ConnectionRefused, message: "Connection refused" })))',
};

describe('connectionProblem', () => {
  it("reads the Rust core's texts", () => {
    const kinds = Object.fromEntries(
      Object.entries(NATIVE).map(([name, text]) => [name, connectionProblem(new Error(text), mtls)?.kind]),
    );
    expect(kinds).toEqual({
      certificateRequired: 'client-certificate-required',
      unknownIssuer: 'unknown-ca',
      badSignature: 'unknown-ca',
      wrongName: 'server-name',
      unauthenticated: 'unauthenticated',
      badCertificate: 'client-certificate-refused',
      refused: 'unreachable',
    });
    expect(connectionProblem(new Error(NATIVE.wrongName), mtls)?.cause).toBe(
      "the server's certificate is not valid for the name 127.0.0.1 (the host of the address): it names DNS:localhost, IP:127.0.0.1",
    );
  });

  it("reads a probe's Node TLS codes over the SDK's silence", () => {
    const silent = new Error('Failed to connect before the deadline');
    expect(connectionProblem(silent, mtls)).toBeNull();
    const probe = (code: string, message = code) =>
      connectionProblem(silent, mtls, { kind: 'handshake-failed', code, message });
    expect(probe('SELF_SIGNED_CERT_IN_CHAIN')?.kind).toBe('unknown-ca');
    expect(probe('UNABLE_TO_VERIFY_LEAF_SIGNATURE')?.kind).toBe('unknown-ca');
    expect(probe('ERR_TLS_CERT_ALTNAME_INVALID')?.kind).toBe('server-name');
    expect(probe('CERT_HAS_EXPIRED')?.kind).toBe('server-certificate-expired');
    expect(probe('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED')?.kind).toBe('client-certificate-required');
    expect(probe('ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE')?.kind).toBe('client-certificate-refused');
    expect(probe('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA')?.kind).toBe('client-certificate-refused');
    expect(probe('ERR_SSL_WRONG_VERSION_NUMBER')?.kind).toBe('server-not-tls');
    expect(connectionProblem(silent, mtls, { kind: 'closed-after-handshake' })?.kind).toBe(
      'client-certificate-refused',
    );
    expect(connectionProblem(silent, mtls, { kind: 'unreachable', reason: 'ECONNREFUSED' })?.kind).toBe(
      'unreachable',
    );
  });

  it('names the API key by where it came from, never by its value, and the namespace on PermissionDenied', () => {
    const unauthenticated = explainedError(
      Object.assign(new Error('16 UNAUTHENTICATED: bad key'), { code: 16 }),
      keyed,
    );
    expect(unauthenticated).toBeInstanceOf(TemporalConnectionError);
    expect(unauthenticated.message).toBe(
      'cannot connect to Temporal at ns.acct.tmprl.cloud:7233: the server refused the API key (TEMPORAL_API_KEY): Unauthenticated; fix: give a valid, unexpired API key in TEMPORAL_API_KEY (or api_key in the profile)',
    );
    const denied = connectionProblem(Object.assign(new Error('7 PERMISSION_DENIED: no'), { code: 7 }), keyed);
    expect(denied?.cause).toBe(
      'the server accepted the credentials but refused access to namespace ns.acct (TEMPORAL_NAMESPACE): PermissionDenied',
    );
    // The SDK's ServiceError keeps the status on its cause.
    const wrapped = new Error('Failed to connect to Temporal server', {
      cause: Object.assign(new Error('16 UNAUTHENTICATED: Request unauthorized.'), { code: 16 }),
    });
    expect(connectionProblem(wrapped, mtls)?.cause).toBe(
      'the server requires credentials, and none were sent: Unauthenticated',
    );
  });

  it('leaves an error it cannot name as it is', () => {
    const odd = new Error('something else entirely');
    expect(explainedError(odd, mtls)).toBe(odd);
  });
});
