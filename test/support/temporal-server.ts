import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { devServerArgs, isTemporalReachable } from '../../cli/dev-server';
import { findTemporalBinary } from '../../cli/temporal-binary';
import { findFreePort } from './free-port';

export { findFreePort } from './free-port';

/** Options for {@link startTestTemporalServer}. */
export interface TestTemporalServerOptions {
  /** `--dynamic-config-value` entries, e.g. `{ 'limit.historyCount.suggestContinueAsNew': 40 }`. */
  dynamicConfig?: Readonly<Record<string, string | number | boolean>>;
  /** SQLite file for state; in-memory when omitted (fastest, and nothing to clean up). */
  dbFile?: string;
  startupTimeoutMs?: number;
  /** Serve the Web UI too (headless by default: most tests never look at it). */
  ui?: boolean;
  /** Web UI port when `ui` is set; a free port when omitted (never the frontend port + 1000 by chance). */
  uiPort?: number;
  /** More `temporal server start-dev` arguments, e.g. `['--ui-codec-endpoint', url]`. */
  extraArgs?: string[];
}

/** A running throwaway Temporal dev server. */
export interface TestTemporalServer {
  address: string;
  namespace: 'default';
  port: number;
  /** Temporal's HTTP API (`--http-port`), `127.0.0.1:<port>`: what TEMPORAL_HTTP_ADDRESS names. */
  httpAddress: string;
  pid: number;
  /** Web UI port and base URL, when started with `ui: true`. */
  uiPort?: number;
  uiUrl?: string;
  /** Kills the server and waits for it to exit. Safe to call twice. */
  stop(): Promise<void>;
}

/** Environment variable that carries the shared test server's address to tests and their subprocesses. */
export const TEST_TEMPORAL_ADDRESS_ENV = 'GOALRUN_TEST_TEMPORAL_ADDRESS';
/** The same for the shared server's HTTP API (unset when a reused server's is not known). */
export const TEST_TEMPORAL_HTTP_ADDRESS_ENV = 'GOALRUN_TEST_TEMPORAL_HTTP_ADDRESS';

const LOOPBACK = '127.0.0.1';
const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
const POLL_INTERVAL_MS = 100;
const STOP_GRACE_MS = 5_000;
// Another process can grab the free port between our probe and the server's bind; retry with a new one.
const START_ATTEMPTS = 3;
const OUTPUT_TAIL_LINES = 30;
// Newer CLIs let the UI skip fetching Temporal's news feed, which cannot load on a closed network.
const UI_NEWS_FLAG = '--ui-disable-news-fetch';
const flagSupport = new Map<string, boolean>();

/**
 * Starts `temporal server start-dev` (headless unless `ui` is set) on a free loopback port with
 * goalrun's search attributes and waits until it (and its UI) answers. Needs the `temporal` binary (see scripts/ensure-temporal.sh).
 */
export async function startTestTemporalServer(
  options: TestTemporalServerOptions = {},
): Promise<TestTemporalServer> {
  const binary = findTemporalBinary();
  if (!binary) {
    throw new Error(
      'Tests need the Temporal CLI binary and none was found (TEMPORAL_CLI_PATH, PATH, goalrun cache). ' +
        'Run `npm run temporal` (bash scripts/ensure-temporal.sh) once, or set TEMPORAL_CLI_PATH.',
    );
  }
  let lastError: unknown;
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    try {
      return await startOnce(binary, options);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function startOnce(binary: string, options: TestTemporalServerOptions): Promise<TestTemporalServer> {
  const port = await findFreePort();
  const address = `${LOOPBACK}:${port}`;
  const uiPort = options.ui ? (options.uiPort ?? (await freeUiPort(port))) : undefined;
  const uiUrl = uiPort === undefined ? undefined : `http://${LOOPBACK}:${uiPort}`;
  let httpPort = await findFreePort();
  while (httpPort === port || httpPort === uiPort) httpPort = await findFreePort();
  const httpAddress = `${LOOPBACK}:${httpPort}`;
  const args = devServerArgs({
    port,
    ip: LOOPBACK,
    headless: !options.ui,
    uiPort,
    httpPort,
    dbFile: options.dbFile,
    dynamicConfig: options.dynamicConfig,
    extraArgs: [
      ...(options.ui && supportsFlag(binary, UI_NEWS_FLAG) ? [UI_NEWS_FLAG] : []),
      ...(options.extraArgs ?? []),
    ],
  });
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // The pipes must be drained or the server blocks once they fill; keep a tail for error messages.
  const output: string[] = [];
  const collect = (chunk: Buffer) => {
    output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    output.splice(0, Math.max(0, output.length - OUTPUT_TAIL_LINES));
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = waitForExit(child);
  // If the test process dies without teardown, do not leave a server behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const stop = async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
  };

  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  const deadline = Date.now() + (options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS);
  while (Date.now() < deadline) {
    if (spawnError) throw new Error(`could not run ${binary}: ${spawnError.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `temporal dev server exited during startup (${binary} ${args.join(' ')}):\n${output.join('\n')}`,
      );
    }
    // The UI listens a moment after the frontend; a test that opens it must not see a refused connection.
    if ((await isTemporalReachable(address, 1_000)) && (!uiUrl || (await isHttpReachable(uiUrl)))) {
      return { address, namespace: 'default', port, httpAddress, pid: child.pid!, uiPort, uiUrl, stop };
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
  await stop();
  throw new Error(`temporal dev server did not answer at ${address} in time:\n${output.join('\n')}`);
}

function supportsFlag(binary: string, flag: string): boolean {
  const key = `${binary} ${flag}`;
  let supported = flagSupport.get(key);
  if (supported === undefined) {
    try {
      supported = execFileSync(binary, ['server', 'start-dev', '--help'], { encoding: 'utf8' }).includes(
        flag,
      );
    } catch {
      supported = false;
    }
    flagSupport.set(key, supported);
  }
  return supported;
}

// A UI at frontend port + 1000 would hide a link that wrongly assumes that convention.
async function freeUiPort(frontendPort: number): Promise<number> {
  let port = await findFreePort();
  while (port === frontendPort + 1000) port = await findFreePort();
  return port;
}

async function isHttpReachable(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

function waitForExit(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
}
