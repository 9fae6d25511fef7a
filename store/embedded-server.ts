/**
 * The embedded store: a real PostgreSQL that goalrun runs in the background under its data directory,
 * so that several goalrun processes (start, worker, watch, list ...) share one store at once.
 *
 * Any process that opens the store with no DATABASE_URL calls {@link ensureEmbeddedStore}: if the server
 * runs, it connects; if not, it starts one, under a lock so that two processes starting at once start
 * one server. The server is detached and outlives the process that started it, like the background
 * Temporal dev server; {@link stopEmbeddedStore} stops it. It listens on 127.0.0.1 only, with a random
 * password kept in a 0600 file, and never on a Unix socket.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { releaseLock } from '../system/lock-file';
import { isProcessAlive } from '../system/processes';
import { findPostgresBinaries, postgresRunner } from './embedded-binaries';
import { checkClusterVersion, choosePort, initializeCluster, spawnServer } from './embedded-cluster';
import {
  EMBEDDED_DATABASE,
  EMBEDDED_HOST,
  EMBEDDED_USER,
  type EmbeddedStorePaths,
  embeddedStorePaths,
  LEGACY_PGLITE_STORE_DIR,
  readLogTail,
  readRecordedPort,
  recordPort,
  runningServer,
  STALE_LOCK_MS,
  tryAcquireLock,
} from './embedded-files';
import { Client } from './pg';

const STARTUP_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const POLL_INTERVAL_MS = 100;
const PROBE_TIMEOUT_MS = 3_000;
/** Ports tried when the recorded one turns out to be taken between our check and the server's bind. */
const PORT_ATTEMPTS = 3;
/** PostgreSQL's error code for a database that does not exist (yet: the starter creates it). */
const INVALID_CATALOG_NAME = '3D000';
/** PostgreSQL's error code while it starts up or recovers. */
const STARTING_UP = '57P03';

/** Options of {@link ensureEmbeddedStore}. */
export interface EnsureEmbeddedStoreOptions {
  /** Where to say that a server was started (default: a `goalrun:` line on stderr). */
  log?: (message: string) => void;
  startupTimeoutMs?: number;
}

/** A running embedded store; `url` carries the password: never print it. */
export interface EmbeddedStoreConnection {
  url: string;
  pid: number;
  port: number;
  /** True when this call started the server. */
  started: boolean;
}

/** What {@link embeddedStoreStatus} reports; nothing in it is secret. */
export interface EmbeddedStoreStatus {
  running: boolean;
  pid?: number;
  /** The port it listens on, or the recorded one it will try first when it is stopped. */
  port?: number;
  /** Connection URL without the password (which is in `passwordFile`). */
  url?: string;
  dir: string;
  dataDir: string;
  logFile: string;
  passwordFile: string;
}

/** Makes sure the embedded server of `home` runs and answers; returns how to connect to it. */
export async function ensureEmbeddedStore(
  home: string,
  options: EnsureEmbeddedStoreOptions = {},
): Promise<EmbeddedStoreConnection> {
  const paths = embeddedStorePaths(home);
  prepareDirectory(paths.dir);
  const running = await answeringServer(paths);
  if (running) return running;

  const timeoutMs = options.startupTimeoutMs ?? STARTUP_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs + STALE_LOCK_MS;
  // Only one process may start the server; the others wait for the winner's server to answer.
  while (!tryAcquireLock(paths.lockFile)) {
    const started = await answeringServer(paths);
    if (started) return started;
    if (Date.now() > deadline) {
      throw new Error(
        `Timed out waiting for another goalrun process to start the embedded store (lock ${paths.lockFile}).`,
      );
    }
    await sleep(POLL_INTERVAL_MS);
  }
  try {
    // The previous holder of the lock may have started it; or a server is up but still recovering.
    const previous = runningServer(paths);
    if (previous) return await waitForServer(paths, previous.pid, previous.port, timeoutMs, 0, false);
    return await startServer(paths, options, timeoutMs);
  } finally {
    releaseLock(paths.lockFile);
  }
}

/** Stops the embedded server of `home` (fast shutdown: open transactions roll back); false if none ran. */
export async function stopEmbeddedStore(home: string, timeoutMs = STOP_TIMEOUT_MS): Promise<boolean> {
  const server = runningServer(embeddedStorePaths(home));
  if (!server) return false;
  const deadline = Date.now() + timeoutMs;
  process.kill(server.pid, 'SIGINT');
  while (isProcessAlive(server.pid) && Date.now() < deadline) await sleep(POLL_INTERVAL_MS);
  if (isProcessAlive(server.pid)) {
    // Immediate shutdown; the next start recovers from the write-ahead log.
    process.kill(server.pid, 'SIGQUIT');
    while (isProcessAlive(server.pid)) await sleep(POLL_INTERVAL_MS);
  }
  return true;
}

/** Pid, port, URL (without password) and files of the embedded store of `home`. */
export function embeddedStoreStatus(home: string): EmbeddedStoreStatus {
  const paths = embeddedStorePaths(home);
  const server = runningServer(paths);
  const port = server?.port ?? readRecordedPort(paths) ?? undefined;
  return {
    running: server !== null,
    pid: server?.pid,
    port,
    url: port ? `postgres://${EMBEDDED_USER}@${EMBEDDED_HOST}:${port}/${EMBEDDED_DATABASE}` : undefined,
    dir: paths.dir,
    dataDir: paths.dataDir,
    logFile: paths.logFile,
    passwordFile: paths.passwordFile,
  };
}

/**
 * The password of the embedded store of `home`, or null before the store exists: a secret for the
 * worker's redaction list (a tool run outside the sandbox could read the file and print it).
 */
export function embeddedStorePassword(home: string): string | null {
  try {
    return fs.readFileSync(embeddedStorePaths(home).passwordFile, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

function prepareDirectory(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.accessSync(dir, fs.constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new Error(
      `The embedded store directory ${dir} cannot be created or written (${code}). Set GOALRUN_HOME to a ` +
        'writable directory, or set DATABASE_URL to a PostgreSQL database.',
    );
  }
}

/** The running server of `paths` if it answers queries on the goalrun database now, else null. */
async function answeringServer(paths: EmbeddedStorePaths): Promise<EmbeddedStoreConnection | null> {
  const server = runningServer(paths);
  if (!server) return null;
  if (!(await probe(paths, server.port, EMBEDDED_DATABASE))) return null;
  const url = connectionUrl(paths, server.port, EMBEDDED_DATABASE);
  return { url, pid: server.pid, port: server.port, started: false };
}

async function startServer(
  paths: EmbeddedStorePaths,
  options: EnsureEmbeddedStoreOptions,
  timeoutMs: number,
): Promise<EmbeddedStoreConnection> {
  const binaries = findPostgresBinaries();
  const runner = postgresRunner(paths.dir, binaries);
  const initialized = fs.existsSync(path.join(paths.dataDir, 'PG_VERSION'));
  if (initialized) checkClusterVersion(paths, binaries, runner);
  else initializeCluster(paths, binaries, runner);
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const port = await choosePort(paths);
    const logStart = appendLogHeader(paths, port);
    const pid = await spawnServer(paths, binaries, runner, port);
    try {
      const server = await waitForServer(paths, pid, port, timeoutMs, logStart, true);
      (options.log ?? defaultLog)(startedMessage(paths, server, !initialized));
      return server;
    } catch (error) {
      lastError = error as Error;
      // Another program took the port between our check and the server's bind: pick another one
      // (port 0 is no valid record, so the next choosePort draws a new port).
      if (!/Address already in use/.test(lastError.message)) throw lastError;
      recordPort(paths, 0);
    }
  }
  throw lastError!;
}

/**
 * Waits until the server answers, then creates the goalrun database if it is missing (under the start
 * lock: other processes count the server as up only once that database answers). Fails with the log's
 * tail when the server exits or does not answer in time.
 */
async function waitForServer(
  paths: EmbeddedStorePaths,
  pid: number,
  port: number,
  timeoutMs: number,
  logStart: number,
  started: boolean,
): Promise<EmbeddedStoreConnection> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isProcessAlive(pid)) {
      throw new Error(
        `The embedded store server exited during startup. Last lines of ${paths.logFile}:\n` +
          readLogTail(paths.logFile, logStart),
      );
    }
    if (await probe(paths, port, 'postgres')) {
      await createGoalrunDatabase(paths, port);
      return { url: connectionUrl(paths, port, EMBEDDED_DATABASE), pid, port, started };
    }
    await sleep(POLL_INTERVAL_MS);
  }
  throw new Error(
    `The embedded store server (pid ${pid}) did not answer on ${EMBEDDED_HOST}:${port} within ` +
      `${Math.round(timeoutMs / 1000)} s. Stop it (kill ${pid}) and retry. Last lines of ${paths.logFile}:\n` +
      readLogTail(paths.logFile, logStart),
  );
}

async function createGoalrunDatabase(paths: EmbeddedStorePaths, port: number): Promise<void> {
  const client = new Client({ connectionString: connectionUrl(paths, port, 'postgres') });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE]);
    if (rows.length === 0) await client.query(`CREATE DATABASE ${EMBEDDED_DATABASE}`);
  } finally {
    await client.end();
  }
}

/** True when a query succeeds; false while the server is starting or the database is not created yet. */
async function probe(paths: EmbeddedStorePaths, port: number, database: string): Promise<boolean> {
  const client = new Client({
    connectionString: connectionUrl(paths, port, database),
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (error) {
    const code = (error as { code?: string }).code;
    // A wrong password will not get better by waiting: say so rather than time out.
    if (code === '28P01') {
      throw new Error(
        `The embedded store on ${EMBEDDED_HOST}:${port} rejected the password in ${paths.passwordFile}. ` +
          `Restore that file, or stop the server (kill the pid in ${paths.pidFile}) and move ${paths.dir} away.`,
      );
    }
    // Connection errors (ECONNREFUSED ...) and "starting up" mean: not yet.
    if (
      code !== undefined &&
      code !== INVALID_CATALOG_NAME &&
      code !== STARTING_UP &&
      !code.startsWith('E')
    ) {
      throw new Error(`The embedded store answered with an error: ${(error as Error).message}`);
    }
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function connectionUrl(paths: EmbeddedStorePaths, port: number, database: string): string {
  let password: string;
  try {
    password = fs.readFileSync(paths.passwordFile, 'utf8').trim();
  } catch (error) {
    throw new Error(
      `The embedded store's password file ${paths.passwordFile} cannot be read ` +
        `(${(error as NodeJS.ErrnoException).code ?? error}). Restore it, or stop the server (kill the pid ` +
        `in ${paths.pidFile}) and move ${paths.dir} away to start an empty store.`,
    );
  }
  return `postgres://${EMBEDDED_USER}:${encodeURIComponent(password)}@${EMBEDDED_HOST}:${port}/${database}`;
}

function appendLogHeader(paths: EmbeddedStorePaths, port: number): number {
  fs.appendFileSync(paths.logFile, `\n--- goalrun: ${new Date().toISOString()} starting on port ${port}\n`);
  return fs.statSync(paths.logFile).size;
}

function startedMessage(
  paths: EmbeddedStorePaths,
  server: EmbeddedStoreConnection,
  created: boolean,
): string {
  const home = path.dirname(paths.dir);
  const legacy = path.join(home, LEGACY_PGLITE_STORE_DIR);
  const legacyNote =
    created && fs.existsSync(legacy)
      ? `; the earlier PGlite store in ${legacy} is left as it was and no longer read`
      : '';
  return (
    `${created ? 'created and started' : 'started'} the embedded PostgreSQL store ` +
    `(pid ${server.pid}, ${EMBEDDED_HOST}:${server.port}, data ${paths.dataDir}, log ${paths.logFile})${legacyNote}`
  );
}

function defaultLog(message: string): void {
  process.stderr.write(`goalrun: ${message}\n`);
}
