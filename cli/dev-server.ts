/**
 * The local Temporal dev server as a process: `goalrun dev` in the foreground, the files it keeps,
 * and stopping the background one. Starting that one is in dev-server-start.ts; addresses, arguments
 * and the reachability probe are in temporal-address.ts.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessAlive } from '../system/processes';
import { looksLikeDevServer, readPidFile, unlinkQuietly } from './dev-server-files';
import { DEV_SERVER_RECORD_FILE, removeDevServerRecord, writeDevServerRecord } from './dev-server-record';
import {
  bindIpFor,
  chooseHttpPort,
  chooseUiPort,
  DEFAULT_TEMPORAL_ADDRESS,
  devServerArgs,
  isLocalHost,
  isTemporalReachable,
  parseTemporalAddress,
} from './temporal-address';
import { requireTemporalBinary } from './temporal-binary';
import { parseDevServerCommand } from './web-ui';

export {
  DEFAULT_TEMPORAL_ADDRESS,
  DEFAULT_TEMPORAL_PORT,
  type DevServerArgsOptions,
  devServerArgs,
  isLocalHost,
  isTemporalReachable,
  parseTemporalAddress,
  SEARCH_ATTRIBUTES,
  uiPortFor,
} from './temporal-address';

/** Files the local dev server keeps under goalrun's data directory. */
export const DEV_SERVER_FILES = {
  db: 'temporal.db',
  log: 'temporal-dev.log',
  pid: 'temporal-dev.pid',
  lock: 'temporal-dev.lock',
  /** {address, uiPort, httpPort, pid}: where `goalrun run` finds the Web UI and the light commands the HTTP API. */
  record: DEV_SERVER_RECORD_FILE,
  /** The address `goalrun dev` (or a background start) last served: goalrun may start a server there again. */
  address: 'temporal-dev.address',
} as const;

const POLL_INTERVAL_MS = 200;
const STOP_TIMEOUT_MS = 10_000;

/** Options for {@link runDevServerForeground}. */
export interface ForegroundDevServerOptions {
  /** goalrun data directory; state goes to `${home}/temporal.db`. */
  home: string;
  address: string;
  /** Override the binary lookup (defaults to {@link requireTemporalBinary}). */
  binary?: string;
  extraArgs?: readonly string[];
}

/** Runs the dev server attached to the terminal (`goalrun dev`); resolves with its exit code. */
export async function runDevServerForeground(options: ForegroundDevServerOptions): Promise<number> {
  const { host, port } = parseTemporalAddress(options.address);
  if (!isLocalHost(host)) {
    throw new Error(
      `goalrun dev runs a server on this machine, but the Temporal address ${options.address} is not local`,
    );
  }
  // A second server would fail on the busy port anyway; say which one holds it and how to stop it.
  if (await isTemporalReachable(options.address)) {
    const pid = readPidFile(join(options.home, DEV_SERVER_FILES.pid));
    const owner = pid !== null && isProcessAlive(pid) ? ` (goalrun's background dev server, pid ${pid})` : '';
    throw new Error(
      `a Temporal server already answers at ${options.address}${owner}; stop it first or use it as is`,
    );
  }
  const binary = options.binary ?? requireTemporalBinary();
  mkdirSync(options.home, { recursive: true });
  recordDevServerAddress(options.home, options.address);
  const uiPort = await chooseUiPort(bindIpFor(host), port);
  const args = devServerArgs({
    port,
    uiPort,
    httpPort: await chooseHttpPort(bindIpFor(host), port, uiPort),
    ip: bindIpFor(host),
    dbFile: join(options.home, DEV_SERVER_FILES.db),
    extraArgs: options.extraArgs,
  });
  const child = spawn(binary, args, { stdio: 'inherit' });
  if (child.pid !== undefined) {
    // Read back from the arguments: extra ones may set other ports or --headless.
    const served = parseDevServerCommand(args);
    writeDevServerRecord(options.home, {
      address: options.address,
      uiPort: served.port,
      ...(served.httpPort === undefined ? {} : { httpPort: served.httpPort }),
      pid: child.pid,
    });
  }
  // A terminal Ctrl-C reaches the child too (same process group); a repeat is harmless, and forwarding
  // covers SIGTERM from a supervisor, which only reaches us.
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return await new Promise<number>((resolve, reject) => {
    const detach = () => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
    };
    child.once('error', (error) => {
      detach();
      reject(error);
    });
    child.once('exit', (code, signal) => {
      detach();
      removeDevServerRecord(options.home);
      resolve(code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : 1));
    });
  });
}

/** Stops the background dev server whose pid is in `${home}/temporal-dev.pid`; false if none ran. */
export async function stopBackgroundDevServer(
  home: string,
  timeoutMs: number = STOP_TIMEOUT_MS,
): Promise<boolean> {
  const pidPath = join(home, DEV_SERVER_FILES.pid);
  const pid = readPidFile(pidPath);
  // The pid may have been reused by an unrelated process since the server died: never signal that.
  if (pid === null || !isProcessAlive(pid) || !looksLikeDevServer(pid)) {
    unlinkQuietly(pidPath);
    return false;
  }
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(pid) && Date.now() < deadline) await sleep(POLL_INTERVAL_MS);
  if (isProcessAlive(pid)) {
    process.kill(pid, 'SIGKILL');
    while (isProcessAlive(pid)) await sleep(POLL_INTERVAL_MS);
  }
  unlinkQuietly(pidPath);
  removeDevServerRecord(home);
  return true;
}

/** Remembers the address a dev server of this data directory serves. */
export function recordDevServerAddress(home: string, address: string): void {
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, DEV_SERVER_FILES.address), `${normalizeAddress(address)}\n`);
}

/** The address `goalrun dev` (or a background start) last served from this data directory, if any. */
export function recordedDevServerAddress(home: string): string | null {
  try {
    const text = readFileSync(join(home, DEV_SERVER_FILES.address), 'utf8').trim();
    return text === '' ? null : text;
  } catch {
    return null;
  }
}

/**
 * Whether goalrun may start a dev server for this address by itself: the default address, or the one
 * a dev server of this data directory served before. Anything else is more likely a typo.
 */
export function mayStartDevServerAt(address: string, home: string): boolean {
  const normalized = normalizeAddress(address);
  return (
    normalized === normalizeAddress(DEFAULT_TEMPORAL_ADDRESS) || normalized === recordedDevServerAddress(home)
  );
}

/** `host:port` with `localhost` and a missing port spelled out, so equal addresses compare equal. */
export function normalizeAddress(address: string): string {
  try {
    const { host, port } = parseTemporalAddress(address);
    const name = host.toLowerCase() === 'localhost' ? '127.0.0.1' : host.toLowerCase();
    return name.includes(':') ? `[${name}]:${port}` : `${name}:${port}`;
  } catch {
    return address.trim();
  }
}
