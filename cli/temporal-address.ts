/**
 * Where Temporal is and how to start it: address parsing, the dev server's arguments with goalrun's
 * search attributes, and the reachability probe. Process management lives in dev-server.ts.
 */
import { connect as tcpConnect } from 'node:net';
import { freePort, isPortFree } from '../system/ports';

/** goalrun's custom search attributes, in the type names `temporal server start-dev` accepts. */
export const SEARCH_ATTRIBUTES = {
  GoalStatus: 'Keyword',
  GoalSession: 'Keyword',
  GoalModel: 'Keyword',
  GoalIteration: 'Int',
} as const satisfies Record<
  string,
  'Keyword' | 'Int' | 'Text' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList'
>;

/** Address goalrun uses when TEMPORAL_ADDRESS is unset. */
export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';

/** Temporal's default frontend gRPC port. */
export const DEFAULT_TEMPORAL_PORT = 7233;

// The dev server puts its Web UI at frontend port + 1000 (8233 for 7233); we keep that convention.
const UI_PORT_OFFSET = 1000;
// Temporal's HTTP API sits at frontend port + 10 by convention (7243 for 7233).
const HTTP_PORT_OFFSET = 10;
const MAX_PORT = 65_535;
const DEFAULT_PROBE_TIMEOUT_MS = 2_000;
/**
 * Once a port answers, the time its gRPC handshake may take: a busy machine (a CI box running tests
 * beside a dev server) can take seconds, and "nothing answers" is then a wrong and confusing verdict.
 */
const GRPC_PROBE_TIMEOUT_MS = 15_000;
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * Dynamic config of every dev server goalrun starts: `goalrun dev`, the background server, the test
 * server and the benchmarks (docker-compose's server reads the same keys from
 * temporal/dynamicconfig/goalrun.yaml). Measured on a 2-core machine (scripts/bench-floor.js): a
 * sequential no-op activity round trip drops from about 100 ms to about 15 ms.
 */
export const GOALRUN_DEV_DYNAMIC_CONFIG = {
  // The history service reads each shard's transfer queue (workflow and activity tasks on their way
  // to matching) at most 20 times a second by default: up to 50 ms of waiting per task. The reader
  // is woken by new tasks, so a higher ceiling costs nothing when idle.
  'history.transferProcessorMaxPollRPS': 1000,
  // A worker that polls the workflow's own task queue gets the activity task in the response to the
  // workflow task completion, without a round trip through matching. Tools run on the goal's queue
  // by default for this reason.
  'system.enableActivityEagerExecution': true,
} as const satisfies Readonly<Record<string, string | number | boolean>>;

/**
 * SQLite pragmas of a dev server that persists to a file: write-ahead logging with NORMAL sync
 * makes a commit one append instead of a journal round trip (an application crash loses nothing;
 * a power cut may lose the last commits of a development server).
 */
export const GOALRUN_DEV_SQLITE_PRAGMAS = { journal_mode: 'wal', synchronous: 'normal' } as const;

/** Options for {@link devServerArgs}. */
export interface DevServerArgsOptions {
  port: number;
  /** Web UI port; the server's own default (port + 1000) when omitted. Ignored when headless. */
  uiPort?: number;
  /** HTTP API port; the server picks a random one when omitted (which no other process can know). */
  httpPort?: number;
  /** SQLite file for persistent state; omitted means in-memory state, lost on exit. */
  dbFile?: string;
  /** IP the frontend (and UI) bind to; loopback by default so the dev server is never exposed. */
  ip?: string;
  headless?: boolean;
  /**
   * `--dynamic-config-value` entries, e.g. `{ 'limit.historyCount.suggestContinueAsNew': 40 }`,
   * on top of {@link GOALRUN_DEV_DYNAMIC_CONFIG} (an entry here wins).
   */
  dynamicConfig?: Readonly<Record<string, string | number | boolean>>;
  /** Leave out goalrun's tuning (dynamic config and SQLite pragmas): the server's own defaults, for benchmarks. */
  serverDefaults?: boolean;
  extraArgs?: readonly string[];
}

/** Arguments for `temporal server start-dev` with goalrun's search attributes registered. */
export function devServerArgs(options: DevServerArgsOptions): string[] {
  const args = ['server', 'start-dev', '--ip', options.ip ?? '127.0.0.1', '--port', String(options.port)];
  if (options.headless) args.push('--headless');
  else if (options.uiPort !== undefined) args.push('--ui-port', String(options.uiPort));
  if (options.httpPort !== undefined) args.push('--http-port', String(options.httpPort));
  const tuned = !options.serverDefaults;
  if (options.dbFile) {
    args.push('--db-filename', options.dbFile);
    if (tuned) {
      for (const [pragma, value] of Object.entries(GOALRUN_DEV_SQLITE_PRAGMAS))
        args.push('--sqlite-pragma', `${pragma}=${value}`);
    }
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES))
    args.push('--search-attribute', `${name}=${type}`);
  const dynamicConfig = { ...(tuned ? GOALRUN_DEV_DYNAMIC_CONFIG : {}), ...options.dynamicConfig };
  // The CLI parses each value as JSON, so strings need quotes while numbers and booleans stay bare.
  for (const [key, value] of Object.entries(dynamicConfig)) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  // start-dev already defaults to warn; being explicit keeps goalrun's log quiet if that default changes.
  args.push('--log-level', 'warn');
  args.push(...(options.extraArgs ?? []));
  return args;
}

/** Host and port of a `host:port` / `[v6]:port` Temporal address (port defaults to 7233). */
export function parseTemporalAddress(address: string): { host: string; port: number } {
  const trimmed = address.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(trimmed);
  if (bracketed) return { host: bracketed[1], port: parsePort(bracketed[2], address) };
  const colons = trimmed.split(':').length - 1;
  if (colons === 0) return { host: trimmed, port: DEFAULT_TEMPORAL_PORT };
  // A bare IPv6 address has several colons and no port.
  if (colons > 1) return { host: trimmed, port: DEFAULT_TEMPORAL_PORT };
  const [host, port] = trimmed.split(':');
  return { host, port: parsePort(port, address) };
}

function parsePort(raw: string | undefined, address: string): number {
  if (raw === undefined) return DEFAULT_TEMPORAL_PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > MAX_PORT) {
    throw new Error(`invalid Temporal address ${JSON.stringify(address)}: bad port ${JSON.stringify(raw)}`);
  }
  return port;
}

/** True when the host names this machine's loopback interface, so goalrun may start a server there. */
export function isLocalHost(host: string): boolean {
  return LOCAL_HOSTS.has(host.toLowerCase());
}

/** Web UI port goalrun uses for a given frontend port (8233 for 7233). */
export function uiPortFor(port: number): number {
  return port + UI_PORT_OFFSET <= MAX_PORT ? port + UI_PORT_OFFSET : port - UI_PORT_OFFSET;
}

/** The HTTP API port goalrun prefers for a given frontend port (7243 for 7233). */
export function preferredHttpPortFor(port: number): number {
  return port + HTTP_PORT_OFFSET <= MAX_PORT ? port + HTTP_PORT_OFFSET : port - HTTP_PORT_OFFSET;
}

/**
 * The HTTP API port of a dev server goalrun starts: frontend port + 10 (Temporal's convention) when
 * it is free, else any free port. Recorded, so the light commands find the API (context.ts).
 */
export function chooseHttpPort(ip: string, frontendPort: number, uiPort: number): Promise<number> {
  return choosePort(ip, preferredHttpPortFor(frontendPort), [frontendPort, uiPort]);
}

/**
 * The Web UI port of a dev server goalrun starts: frontend port + 1000 when it is free, else any
 * free port. A taken UI port would otherwise stop the whole server as it starts.
 */
export function chooseUiPort(ip: string, frontendPort: number): Promise<number> {
  return choosePort(ip, uiPortFor(frontendPort), [frontendPort]);
}

async function choosePort(ip: string, preferred: number, avoid: readonly number[]): Promise<number> {
  if (!avoid.includes(preferred) && (await isPortFree(preferred, ip))) return preferred;
  let port: number;
  do port = await freePort(ip);
  while (avoid.includes(port));
  return port;
}

/** The IP a local dev server binds to for a loopback host. */
export function bindIpFor(host: string): string {
  return host === '::1' ? '::1' : '127.0.0.1';
}

function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function tcpProbe(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** True if a Temporal frontend answers GetSystemInfo at `address` within `timeoutMs`. */
export async function isTemporalReachable(
  address: string,
  timeoutMs: number = DEFAULT_PROBE_TIMEOUT_MS,
): Promise<boolean> {
  const started = Date.now();
  const { host, port } = parseTemporalAddress(address);
  // A plain TCP connect fails fast on a closed port; gRPC alone would retry until its deadline.
  if (!(await tcpProbe(host, port, timeoutMs))) return false;
  const remaining = Math.max(timeoutMs - (Date.now() - started), GRPC_PROBE_TIMEOUT_MS);
  // Required here: the gRPC client is what the light commands avoid loading (issue 10).
  const { Connection } = require('@temporalio/client') as typeof import('@temporalio/client');
  const connection = Connection.lazy({ address: formatAddress(host, port), connectTimeout: remaining });
  try {
    // ensureConnected calls WorkflowService.GetSystemInfo, so anything but a Temporal frontend fails here.
    await connection.ensureConnected();
    return true;
  } catch {
    return false;
  } finally {
    await connection.close().catch(() => undefined);
  }
}
