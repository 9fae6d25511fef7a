/**
 * Why a connection to Temporal failed, in words that name the setting to fix. The SDK's two clients
 * say it very differently: grpc-js (the CLI's client) only says "Failed to connect before the
 * deadline" for any TLS failure, and the worker's Rust core says `InvalidCertificate(UnknownIssuer)`.
 * So the cause is read from the error's text, from a gRPC status, and from a TLS handshake of
 * goalrun's own (worker/tls-probe.ts), whichever says more. Pure: unit-tested on the texts each
 * client and Node's TLS give.
 */
import { ConfigError } from '../core/errors';
import { TEMPORAL_ENV, type TemporalConnectionSettings } from './temporal-connection';

/** What goalrun's own TCP and TLS handshake with the server saw (worker/tls-probe.ts). */
export type ProbeResult =
  /** No TCP connection (refused, no route, unknown host). */
  | { kind: 'unreachable'; reason: string }
  /** The TLS handshake, or the first read after it, failed with this Node error. */
  | { kind: 'handshake-failed'; code: string; message: string }
  /** The handshake completed, then the server hung up without a word: it refused the client. */
  | { kind: 'closed-after-handshake' }
  /** The handshake completed and the server spoke: TLS itself is fine. */
  | { kind: 'answered' }
  /** Asked with TLS off: the server completed a TLS handshake, so it wants TLS. */
  | { kind: 'speaks-tls' }
  /** Asked with TLS off: the server is not a TLS server (nothing to explain there). */
  | { kind: 'speaks-plain' };

/** The causes goalrun names. */
export type ConnectionProblemKind =
  | 'unreachable'
  | 'client-certificate-required'
  | 'client-certificate-refused'
  | 'unknown-ca'
  | 'server-name'
  | 'server-certificate-expired'
  | 'server-not-tls'
  | 'server-needs-tls'
  | 'unauthenticated'
  | 'permission-denied'
  | 'namespace-not-found';

/** A cause and the setting that fixes it. */
export interface ConnectionProblem {
  kind: ConnectionProblemKind;
  /** What went wrong, naming the settings involved and where they came from. */
  cause: string;
  /** What to change. */
  fix: string;
}

/** A connection refused for a reason the user's settings can fix; the CLI exits 2 on it. */
export class TemporalConnectionError extends ConfigError {
  constructor(
    readonly problem: ConnectionProblem,
    address: string,
  ) {
    super(`cannot connect to Temporal at ${address}: ${problem.cause}; fix: ${problem.fix}`);
    this.name = 'TemporalConnectionError';
  }
}

/** A Temporal server that does not answer at all (down, or a wrong address). */
export class TemporalUnreachableError extends Error {
  constructor(
    readonly problem: ConnectionProblem,
    address: string,
  ) {
    super(`cannot connect to Temporal at ${address}: ${problem.cause}; fix: ${problem.fix}`);
    this.name = 'TemporalUnreachableError';
  }
}

// The texts of each cause, as Node's TLS (error codes, OpenSSL messages), grpc-js and the Rust core
// (rustls, tonic) word them. Alerts the server sent come before the client's own verification errors:
// "UnknownCA" received from the server is about our certificate, "UnknownIssuer" about the server's.
const PATTERNS: ReadonlyArray<[ConnectionProblemKind, RegExp]> = [
  ['client-certificate-required', /CERTIFICATE_REQUIRED|CertificateRequired|alert certificate required/i],
  [
    'client-certificate-refused',
    /ALERT_BAD_CERTIFICATE|alert bad certificate|fatal alert: BadCertificate|ALERT_UNKNOWN_CA|alert unknown ca|fatal alert: UnknownCA|ALERT_CERTIFICATE_(EXPIRED|REVOKED|UNKNOWN)|alert certificate (expired|revoked|unknown)|fatal alert: Certificate(Expired|Revoked|Unknown)|ALERT_UNSUPPORTED_CERTIFICATE|fatal alert: (UnsupportedCertificate|DecryptError|AccessDenied)|ALERT_DECRYPT_ERROR|alert decrypt error/i,
  ],
  [
    'server-name',
    /ERR_TLS_CERT_ALTNAME_INVALID|does not match certificate's altnames|NotValidForName|not valid for name/i,
  ],
  [
    'server-certificate-expired',
    /CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|certificate has expired|certificate is not yet valid|InvalidCertificate\((Expired|NotValidYet)/i,
  ],
  [
    'unknown-ca',
    /SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_GET_ISSUER_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE|CERT_SIGNATURE_FAILURE|self[- ]signed certificate|unable to (get local issuer|verify the first) certificate|UnknownIssuer|InvalidCertificate\(BadSignature\)/i,
  ],
  [
    'server-not-tls',
    /WRONG_VERSION_NUMBER|wrong version number|InvalidContentType|received corrupt message|packet length too long|HTTP_REQUEST/i,
  ],
  ['unauthenticated', /\bUNAUTHENTICATED\b|valid authentication credentials|code: Unauthenticated/i],
  [
    'permission-denied',
    /PERMISSION_DENIED|does not have permission|code: PermissionDenied|Request unauthorized/i,
  ],
  ['namespace-not-found', /namespace[^\n]*(is )?not found|NamespaceNotFound/i],
  [
    'unreachable',
    /ECONNREFUSED|Connection refused|ENOTFOUND|EAI_AGAIN|dns error|failed to lookup address|EHOSTUNREACH|No route to host|ENETUNREACH/i,
  ],
];

/** gRPC status codes that name a cause by themselves. */
const GRPC_CODES: Readonly<Record<number, ConnectionProblemKind>> = {
  5: 'namespace-not-found',
  7: 'permission-denied',
  16: 'unauthenticated',
};

/** Everything an error says: its message, its causes' messages, a gRPC status code and details. */
export function errorEvidence(err: unknown): { text: string; grpcCode?: number } {
  const texts: string[] = [];
  let grpcCode: number | undefined;
  let current: unknown = err;
  for (let depth = 0; current && depth < 6; depth++) {
    const each = current as { message?: unknown; code?: unknown; details?: unknown; cause?: unknown };
    if (typeof each.message === 'string') texts.push(each.message);
    else if (typeof current === 'string') texts.push(current);
    if (typeof each.details === 'string') texts.push(each.details);
    if (typeof each.code === 'number' && grpcCode === undefined) grpcCode = each.code;
    if (typeof each.code === 'string') texts.push(each.code);
    current = each.cause;
  }
  return { text: texts.join(' | '), grpcCode };
}

/** The named cause an error of this module carries, if it is one. */
export function problemOf(err: unknown): ConnectionProblem | undefined {
  return err instanceof TemporalConnectionError || err instanceof TemporalUnreachableError
    ? err.problem
    : undefined;
}

/** The first kind whose pattern the text matches. */
function kindOfText(text: string): ConnectionProblemKind | undefined {
  return PATTERNS.find(([, pattern]) => pattern.test(text))?.[0];
}

/** The kind a probe result points at by itself, if any. */
function kindOfProbe(
  probe: ProbeResult | undefined,
  settings: TemporalConnectionSettings,
): ConnectionProblemKind | undefined {
  if (!probe) return undefined;
  switch (probe.kind) {
    case 'unreachable':
      return 'unreachable';
    case 'handshake-failed':
      return kindOfText(`${probe.code} ${probe.message}`);
    case 'closed-after-handshake':
      return settings.tls !== false && settings.tls.clientCert
        ? 'client-certificate-refused'
        : 'client-certificate-required';
    case 'speaks-tls':
      return 'server-needs-tls';
    default:
      return undefined;
  }
}

/** The names a server's certificate holds, as the TLS error listed them ("" when it did not). */
function presentedNames(text: string): string {
  const node = /is not in the cert's altnames: ([^|\n]+)/.exec(text)?.[1];
  if (node) return node.trim();
  const rustls = /presented: \[([^\]]*)\]/.exec(text)?.[1];
  return rustls
    ? rustls
        .replace(/\\?"/g, '')
        .replace(/DnsName\(([^)]*)\)/g, 'DNS:$1')
        .replace(/IpAddress\(([^)]*)\)/g, 'IP:$1')
    : '';
}

/** "X (where it came from)", or the variable to set when it is not set. */
function setting(
  settings: TemporalConnectionSettings,
  name: keyof TemporalConnectionSettings['origins'],
): string {
  const origin = settings.origins[name];
  return origin ?? 'not set';
}

function pathOf(source: { path: string } | { data: string } | undefined): string {
  if (!source) return 'none';
  return 'path' in source ? source.path : 'inline PEM';
}

/** The cause and fix of a kind, worded for these settings. */
function describe(
  kind: ConnectionProblemKind,
  settings: TemporalConnectionSettings,
  text: string,
): ConnectionProblem {
  const tls = settings.tls === false ? null : settings.tls;
  const address = `${settings.address} (${setting(settings, 'address')})`;
  const certVars = `${TEMPORAL_ENV.clientCert} and ${TEMPORAL_ENV.clientKey} (or tls.client_cert_path and tls.client_key_path of a temporal.toml profile)`;
  const caVar = `${TEMPORAL_ENV.serverCa} (or tls.server_ca_cert_path)`;
  switch (kind) {
    case 'unreachable':
      return {
        kind,
        cause: `nothing answers at ${address}`,
        fix: `start the server, or correct the address (${TEMPORAL_ENV.address}, or address in the profile)`,
      };
    case 'client-certificate-required':
      return {
        kind,
        cause: tls?.clientCert
          ? `the server asked for a client certificate and refused ${pathOf(tls.clientCert)} (${setting(settings, 'clientCert')})`
          : 'the server requires a client certificate (mTLS), and none is configured',
        fix: `set ${certVars} to a certificate signed by a CA the server trusts for clients`,
      };
    case 'client-certificate-refused':
      return {
        kind,
        cause: tls?.clientCert
          ? `the server refused the client certificate ${pathOf(tls.clientCert)} (${setting(settings, 'clientCert')})`
          : 'the server refused the connection after the TLS handshake, without a client certificate',
        fix: `set ${certVars} to a certificate the server accepts: signed by a CA among its client CAs (clientCaFiles), valid now, made for client authentication, with its own key`,
      };
    case 'unknown-ca':
      return {
        kind,
        cause: `the server's certificate is not signed by a CA this process trusts (server CA: ${tls?.serverCa ? `${pathOf(tls.serverCa)} (${setting(settings, 'serverCa')})` : "the system's roots"})`,
        fix: `set ${caVar} to the CA certificate that signed the server's certificate`,
      };
    case 'server-name': {
      const names = presentedNames(text);
      const name = tls?.serverName
        ? `${tls.serverName} (${setting(settings, 'serverName')})`
        : `${settings.address.replace(/:\d+$/, '')} (the host of the address)`;
      return {
        kind,
        cause: `the server's certificate is not valid for the name ${name}${names ? `: it names ${names}` : ''}`,
        fix: `set ${TEMPORAL_ENV.serverName} (or tls.server_name) to a name the certificate holds, or connect by that name`,
      };
    }
    case 'server-certificate-expired':
      return {
        kind,
        cause: "the server's certificate has expired or is not valid yet",
        fix: "renew the server's certificate (or correct this machine's clock)",
      };
    case 'server-not-tls':
      return {
        kind,
        cause: `TLS is on (${setting(settings, 'tls')}), but the server at ${settings.address} does not speak TLS`,
        fix: `set ${TEMPORAL_ENV.tls}=false (or tls.disabled = true in the profile), or connect to the server's TLS port`,
      };
    case 'server-needs-tls':
      return {
        kind,
        cause: `TLS is off, but the server at ${address} speaks TLS`,
        fix: `set ${TEMPORAL_ENV.tls}=true and ${TEMPORAL_ENV.serverCa} (and ${TEMPORAL_ENV.clientCert} and ${TEMPORAL_ENV.clientKey} for mTLS), or use a temporal.toml profile that has them (--profile NAME)`,
      };
    case 'unauthenticated':
      return settings.apiKey
        ? {
            kind,
            cause: `the server refused the API key (${setting(settings, 'apiKey')}): Unauthenticated`,
            fix: `give a valid, unexpired API key in ${TEMPORAL_ENV.apiKey} (or api_key in the profile)`,
          }
        : {
            kind,
            cause: 'the server requires credentials, and none were sent: Unauthenticated',
            fix: `set ${TEMPORAL_ENV.apiKey} (or api_key in a temporal.toml profile), or a client certificate (${certVars})`,
          };
    case 'permission-denied':
      return {
        kind,
        cause: `the server accepted the credentials but refused access to namespace ${settings.namespace} (${setting(settings, 'namespace')}): PermissionDenied`,
        fix: `check ${TEMPORAL_ENV.namespace} (Temporal Cloud: name.account), and that the ${settings.apiKey ? 'API key' : 'certificate'} is allowed on that namespace`,
      };
    case 'namespace-not-found':
      return {
        kind,
        cause: `the server has no namespace ${settings.namespace} (${setting(settings, 'namespace')})`,
        fix: `create it, or set ${TEMPORAL_ENV.namespace} (or namespace in the profile) to one that exists`,
      };
  }
}

/**
 * The named cause of a failed connection, or null when neither the error nor the probe names one (the
 * original error is then the best message).
 */
export function connectionProblem(
  err: unknown,
  settings: TemporalConnectionSettings,
  probe?: ProbeResult,
): ConnectionProblem | null {
  const { text, grpcCode } = errorEvidence(err);
  const probeText = probe?.kind === 'handshake-failed' ? `${probe.code} ${probe.message}` : '';
  const kind =
    kindOfProbe(probe, settings) ??
    (grpcCode !== undefined ? GRPC_CODES[grpcCode] : undefined) ??
    kindOfText(text);
  if (!kind) return null;
  return describe(kind, settings, `${probeText} ${text}`);
}

/** The error to show for a failed connection: the named cause when there is one, else the original. */
export function explainedError(
  err: unknown,
  settings: TemporalConnectionSettings,
  probe?: ProbeResult,
): Error {
  const problem = connectionProblem(err, settings, probe);
  if (!problem) return err instanceof Error ? err : new Error(String(err));
  return problem.kind === 'unreachable'
    ? new TemporalUnreachableError(problem, settings.address)
    : new TemporalConnectionError(problem, settings.address);
}
