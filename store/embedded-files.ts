/**
 * The files of the embedded store server under goalrun's data directory, and the small process and
 * lock helpers its lifecycle (embedded-server.ts) uses.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tryAcquireLock as tryAcquireLockFile } from '../system/lock-file';
import { isProcessAlive } from '../system/processes';

/** Subdirectory of the data directory that holds the embedded PostgreSQL store. */
export const EMBEDDED_STORE_DIR = 'store-pg';

/** Subdirectory where goalrun kept its earlier single-process PGlite store; never read any more. */
export const LEGACY_PGLITE_STORE_DIR = 'store';

/** Database and user goalrun creates in the embedded server. */
export const EMBEDDED_DATABASE = 'goalrun';
export const EMBEDDED_USER = 'goalrun';

/** The server listens on this loopback address only. */
export const EMBEDDED_HOST = '127.0.0.1';

/** Where each file of the embedded store lives. */
export interface EmbeddedStorePaths {
  /** `<home>/store-pg`: everything below is private to goalrun (mode 0700). */
  dir: string;
  /** PGDATA of the cluster. */
  dataDir: string;
  /** PostgreSQL writes its pid (first line) and port (fourth line) here while it runs. */
  pidFile: string;
  /** The password of the `goalrun` user, mode 0600. */
  passwordFile: string;
  /** `{ "port": N }`: the port the server used last, reused while it is free. */
  stateFile: string;
  /** The server's output. */
  logFile: string;
  /** Held by the process that starts the server, so two processes starting at once start one. */
  lockFile: string;
}

/** The paths of the embedded store of a data directory. */
export function embeddedStorePaths(home: string): EmbeddedStorePaths {
  const dir = path.resolve(home, EMBEDDED_STORE_DIR);
  const dataDir = path.join(dir, 'data');
  return {
    dir,
    dataDir,
    pidFile: path.join(dataDir, 'postmaster.pid'),
    passwordFile: path.join(dir, 'password'),
    stateFile: path.join(dir, 'server.json'),
    logFile: path.join(dir, 'postgres.log'),
    lockFile: path.join(dir, 'start.lock'),
  };
}

/** The recorded port, or null when none is recorded. */
export function readRecordedPort(paths: EmbeddedStorePaths): number | null {
  try {
    const port = (JSON.parse(fs.readFileSync(paths.stateFile, 'utf8')) as { port?: unknown }).port;
    return Number.isInteger(port) && (port as number) > 0 && (port as number) < 65536
      ? (port as number)
      : null;
  } catch {
    return null;
  }
}

/** Records the port atomically (write, then rename), so a reader never sees half a file. */
export function recordPort(paths: EmbeddedStorePaths, port: number): void {
  const tmp = `${paths.stateFile}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify({ port })}\n`, { mode: 0o600 });
  fs.renameSync(tmp, paths.stateFile);
}

/** The pid and port of a running server of this data directory, from PostgreSQL's own pid file. */
export function runningServer(paths: EmbeddedStorePaths): { pid: number; port: number } | null {
  let lines: string[];
  try {
    lines = fs.readFileSync(paths.pidFile, 'utf8').split('\n');
  } catch {
    return null;
  }
  const pid = Number.parseInt(lines[0], 10);
  const port = Number.parseInt(lines[3] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isProcessAlive(pid) || !isServerOf(pid, paths.dataDir)) {
    return null;
  }
  return { pid, port: Number.isInteger(port) && port > 0 ? port : (readRecordedPort(paths) ?? 0) };
}

/** Whether `pid` is a postgres serving `dataDir`: a pid left in a stale file may belong to anything now. */
function isServerOf(pid: number, dataDir: string): boolean {
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmdline.some((arg) => arg.endsWith('postgres')) && cmdline.includes(dataDir);
  } catch {
    // No /proc (macOS): trust PostgreSQL's pid file, which it removes on a clean shutdown.
    return true;
  }
}

/** A lock whose holder is dead or that is older than this is broken (a start takes far less). */
export const STALE_LOCK_MS = 120_000;

/** Takes the start lock; false when another live process holds it. */
export function tryAcquireLock(lockFile: string): boolean {
  return tryAcquireLockFile(lockFile, STALE_LOCK_MS);
}

/** The last lines of the server log written since byte `fromByte`, indented, for an error message. */
export function readLogTail(logFile: string, fromByte: number, lines = 20): string {
  try {
    const text = fs.readFileSync(logFile).subarray(fromByte).toString('utf8').trimEnd();
    if (text === '') return '  (log is empty)';
    return text
      .split('\n')
      .slice(-lines)
      .map((line) => `  ${line}`)
      .join('\n');
  } catch {
    return '  (log unreadable)';
  }
}
