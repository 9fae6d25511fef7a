/**
 * The local Temporal dev server as a process: `goalrun dev` in the foreground, or started in the
 * background by any command that finds no server at a local address (one process at a time, under
 * a lock). Addresses, arguments and the reachability probe are in temporal-address.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { releaseLock } from '../system/lock-file';
import { isProcessAlive } from '../system/processes';
import {
  looksLikeDevServer,
  readLogTail,
  readPidFile,
  STALE_LOCK_MS,
  tryAcquireLock,
  unlinkQuietly,
} from './dev-server-files';
import { DEV_SERVER_RECORD_FILE, removeDevServerRecord, writeDevServerRecord } from './dev-server-record';
import {
  bindIpFor,
  chooseHttpPort,
  DEFAULT_TEMPORAL_ADDRESS,
  devServerArgs,
  isLocalHost,
  isTemporalReachable,
  parseTemporalAddress,
  uiPortFor,
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

import { terminalSafe } from '../core/text';

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

const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
const POLL_INTERVAL_MS = 200;
const STOP_TIMEOUT_MS = 10_000;
// A lock older than this belongs to a process that died mid-start (startup itself is bounded by 30 s).

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
  const uiPort = uiPortFor(port);
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

/** Options for {@link ensureTemporalServer}. */
export interface EnsureTemporalServerOptions {
  address: string;
  /** goalrun data directory: db, log, pid and lock files of the background server live here. */
  home: string;
  log?: (message: string) => void;
  /** Override the binary lookup (defaults to {@link requireTemporalBinary}). */
  binary?: string;
  /** Web UI port of a server started here (defaults to {@link uiPortFor}). */
  uiPort?: number;
  startupTimeoutMs?: number;
  /**
   * Whether a server may be started when none answers (default true). The CLI allows it only for the
   * default address and the one `goalrun dev` recorded, so a typo never starts a second server.
   */
  mayStart?: boolean;
}

/** Outcome of {@link ensureTemporalServer}: `started` is false when a server already answered. */
export interface EnsureTemporalServerResult {
  started: boolean;
  pid?: number;
  uiUrl?: string;
}

/**
 * Makes sure a Temporal server answers at `address`: if none does and the address is local, starts a
 * persistent dev server in the background (it outlives this process) and waits until it answers.
 */
export async function ensureTemporalServer(
  options: EnsureTemporalServerOptions,
): Promise<EnsureTemporalServerResult> {
  const { address, home } = options;
  if (await isTemporalReachable(address)) return { started: false };
  const { host, port } = parseTemporalAddress(address);
  if (!isLocalHost(host)) {
    throw new Error(
      `No Temporal server answers at ${address}. Start it, or fix TEMPORAL_ADDRESS ` +
        `(goalrun only starts a dev server by itself for localhost addresses).`,
    );
  }
  if (options.mayStart === false) {
    const recorded = recordedDevServerAddress(home);
    throw new Error(
      `nothing answers at ${address} (TEMPORAL_ADDRESS). goalrun starts a dev server by itself only at ` +
        `${DEFAULT_TEMPORAL_ADDRESS}${recorded ? ` or at ${recorded}, where \`goalrun dev\` last ran` : ''}. ` +
        `Fix the address, or run \`goalrun dev\` once to serve ${address}.`,
    );
  }
  mkdirSync(home, { recursive: true });
  const timeoutMs = options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
  const lockPath = join(home, DEV_SERVER_FILES.lock);
  const deadline = Date.now() + timeoutMs + STALE_LOCK_MS;

  // Only one process may start the server; the others wait for the winner's server to answer.
  while (!tryAcquireLock(lockPath)) {
    if (await isTemporalReachable(address)) return { started: false };
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for another goalrun process to start Temporal (lock ${lockPath})`);
    }
    await sleep(POLL_INTERVAL_MS);
  }
  try {
    // Whoever held the lock before us may have started it in the meantime.
    if (await isTemporalReachable(address)) return { started: false };
    if (await waitForPreviousServer(options, timeoutMs)) return { started: false };
    return await startBackgroundServer(options, host, port, timeoutMs);
  } finally {
    releaseLock(lockPath);
  }
}

/**
 * A server from an earlier run that is alive but not answering may still be starting (its starter
 * died mid-wait); a second server on the same SQLite file would corrupt goalrun's view, so wait for it
 * and fail clearly if it never answers. True when it came up.
 */
async function waitForPreviousServer(
  options: EnsureTemporalServerOptions,
  timeoutMs: number,
): Promise<boolean> {
  const pidPath = join(options.home, DEV_SERVER_FILES.pid);
  const pid = readPidFile(pidPath);
  if (pid === null) return false;
  if (!isProcessAlive(pid) || !looksLikeDevServer(pid)) {
    unlinkQuietly(pidPath);
    return false;
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && isProcessAlive(pid)) {
    if (await isTemporalReachable(options.address)) return true;
    await sleep(POLL_INTERVAL_MS);
  }
  if (!isProcessAlive(pid)) {
    unlinkQuietly(pidPath);
    return false;
  }
  throw new Error(
    `A Temporal dev server started by goalrun (pid ${pid}) is running but does not answer at ` +
      `${options.address}. Stop it (kill ${pid}) and retry; its log is ${join(options.home, DEV_SERVER_FILES.log)}.`,
  );
}

async function startBackgroundServer(
  options: EnsureTemporalServerOptions,
  host: string,
  port: number,
  timeoutMs: number,
): Promise<EnsureTemporalServerResult> {
  const { address, home } = options;
  const binary = options.binary ?? requireTemporalBinary();
  const uiPort = options.uiPort ?? uiPortFor(port);
  const logPath = join(home, DEV_SERVER_FILES.log);
  const pidPath = join(home, DEV_SERVER_FILES.pid);
  const httpPort = await chooseHttpPort(bindIpFor(host), port, uiPort);
  const args = devServerArgs({
    port,
    uiPort,
    httpPort,
    ip: bindIpFor(host),
    dbFile: join(home, DEV_SERVER_FILES.db),
  });

  appendFileSync(logPath, `\n--- goalrun: ${new Date().toISOString()} ${binary} ${args.join(' ')}\n`);
  const logStart = statSync(logPath).size;
  const logFd = openSync(logPath, 'a');
  let child: ChildProcess;
  try {
    // detached + its own log file lets the server outlive this CLI invocation, like a daemon.
    child = spawn(binary, args, { cwd: home, detached: true, stdio: ['ignore', logFd, logFd] });
  } finally {
    closeSync(logFd);
  }
  const exited: { how?: string } = {};
  child.once('exit', (code, signal) => {
    exited.how = signal ? `signal ${signal}` : `exit code ${code}`;
  });
  const pid = await spawnedPid(child);
  child.unref();
  writeFileSync(pidPath, `${pid}\n`);
  writeDevServerRecord(home, { address, uiPort, httpPort, pid });
  recordDevServerAddress(home, address);

  const uiUrl = `http://localhost:${uiPort}`;
  (options.log ?? defaultLog)(
    `no Temporal server answered at ${address}; started a local dev server ` +
      `(pid ${pid}, Web UI ${uiUrl}, log ${logPath})`,
  );

  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited.how) {
      unlinkQuietly(pidPath);
      throw new Error(
        `the Temporal dev server exited during startup (${exited.how}). Last lines of ${logPath}:\n` +
          readLogTail(logPath, logStart),
      );
    }
    if (await isTemporalReachable(address)) return { started: true, pid, uiUrl };
    await sleep(POLL_INTERVAL_MS);
  }
  // Do not leave a half-started server holding the SQLite file and the ports.
  child.kill('SIGKILL');
  unlinkQuietly(pidPath);
  throw new Error(
    `the Temporal dev server did not answer at ${address} within ${Math.round(timeoutMs / 1000)} s. ` +
      `Last lines of ${logPath}:\n${readLogTail(logPath, logStart)}`,
  );
}

function spawnedPid(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    child.once('spawn', () => resolve(child.pid!));
    child.once('error', (error) =>
      reject(new Error(`could not start the temporal binary: ${error.message}`)),
    );
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

function defaultLog(message: string): void {
  process.stderr.write(`goalrun: ${terminalSafe(message)}\n`);
}
