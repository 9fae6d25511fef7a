/**
 * Starting the local Temporal dev server in the background when a command finds none: one starter
 * at a time under a lock, the ports chosen, and a start that lost a port to another program retried.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, openSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { terminalSafe } from '../core/text';
import { releaseLock } from '../system/lock-file';
import { isPortFree } from '../system/ports';
import { isProcessAlive } from '../system/processes';
import { DEV_SERVER_FILES, recordDevServerAddress, recordedDevServerAddress } from './dev-server';
import {
  looksLikeDevServer,
  readLogSince,
  readLogTail,
  readPidFile,
  STALE_LOCK_MS,
  takenPortIn,
  tryAcquireLock,
  unlinkQuietly,
} from './dev-server-files';
import { writeDevServerRecord } from './dev-server-record';
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

const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
const POLL_INTERVAL_MS = 200;
// The server binds ports it picked itself (its internal services) and ones goalrun picked a moment
// before; on a busy machine another program can take one in between. A new start picks new ones.
const START_ATTEMPTS = 3;

/** Options for {@link ensureTemporalServer}. */
export interface EnsureTemporalServerOptions {
  address: string;
  /** goalrun data directory: db, log, pid and lock files of the background server live here. */
  home: string;
  log?: (message: string) => void;
  /** Override the binary lookup (defaults to {@link requireTemporalBinary}). */
  binary?: string;
  /** Web UI port of a server started here (default: frontend port + 1000, or any free port if taken). */
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
    // Whoever held the lock before us may have started it in the meantime: the start looks again
    // when it finds the port taken (a probe of a taken port can take 15 s, of a free one none).
    if (await waitForPreviousServer(options, timeoutMs)) return { started: false };
    return await startBackgroundServer(options, host, port, Date.now() + timeoutMs);
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

/** Starts the server, again with new ports while a start loses a port it did not choose for the user. */
async function startBackgroundServer(
  options: EnsureTemporalServerOptions,
  host: string,
  port: number,
  deadline: number,
): Promise<EnsureTemporalServerResult> {
  const log = options.log ?? defaultLog;
  for (let attempt = 1; ; attempt++) {
    // The frontend port is the user's: if another program holds it, no new start can help.
    if (!(await isPortFree(port, bindIpFor(host)))) {
      if (await isTemporalReachable(options.address)) return { started: false };
      throw new Error(
        `port ${port} on ${bindIpFor(host)} is taken by a program that does not answer as a Temporal ` +
          `server, so goalrun cannot start one at ${options.address}. Stop that program, or set ` +
          'TEMPORAL_ADDRESS to another port and run `goalrun dev` there once.',
      );
    }
    const outcome = await startOnce(options, host, port, deadline);
    if ('started' in outcome) return outcome;
    const taken = takenPortIn(outcome.log);
    if (taken === null || attempt >= START_ATTEMPTS || Date.now() > deadline) throw outcome.error;
    log(`the dev server lost port ${taken} to another program as it started; starting it again`);
  }
}

/** One start: the result when it answers; when it exits first, the error and what it logged. */
async function startOnce(
  options: EnsureTemporalServerOptions,
  host: string,
  port: number,
  deadline: number,
): Promise<EnsureTemporalServerResult | { error: Error; log: string }> {
  const { address, home } = options;
  const binary = options.binary ?? requireTemporalBinary();
  const ip = bindIpFor(host);
  const uiPort = options.uiPort ?? (await chooseUiPort(ip, port));
  const httpPort = await chooseHttpPort(ip, port, uiPort);
  const logPath = join(home, DEV_SERVER_FILES.log);
  const pidPath = join(home, DEV_SERVER_FILES.pid);
  const args = devServerArgs({ port, uiPort, httpPort, ip, dbFile: join(home, DEV_SERVER_FILES.db) });

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

  while (Date.now() < deadline) {
    if (exited.how) {
      unlinkQuietly(pidPath);
      return {
        error: new Error(
          `the Temporal dev server exited during startup (${exited.how}). From ${logPath}:\n` +
            readLogTail(logPath, logStart),
        ),
        log: readLogSince(logPath, logStart),
      };
    }
    if (await isTemporalReachable(address)) return { started: true, pid, uiUrl };
    await sleep(POLL_INTERVAL_MS);
  }
  // Do not leave a half-started server holding the SQLite file and the ports.
  child.kill('SIGKILL');
  unlinkQuietly(pidPath);
  throw new Error(
    `the Temporal dev server did not answer at ${address} within ` +
      `${Math.round((options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS) / 1000)} s. ` +
      `From ${logPath}:\n${readLogTail(logPath, logStart)}`,
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

function defaultLog(message: string): void {
  process.stderr.write(`goalrun: ${terminalSafe(message)}\n`);
}
