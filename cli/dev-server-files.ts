/**
 * The dev server's files as a process manager needs them: the start lock, the pid file, the log's
 * tail for an error message, and whether a pid is a live dev server.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, unlinkSync } from 'node:fs';
import { tryAcquireLock as tryAcquireLockFile } from '../system/lock-file';

/** A start lock older than any startup can take is broken: its holder died without releasing it. */
export const STALE_LOCK_MS = 60_000;
const LOG_TAIL_LINES = 25;
const LOG_TAIL_BYTES = 16 * 1024;

/** Takes the start lock (one starter at a time); false when another live process holds it. */
export function tryAcquireLock(lockPath: string): boolean {
  return tryAcquireLockFile(lockPath, STALE_LOCK_MS);
}

/** The pid in a pid file, or null. */
export function readPidFile(pidPath: string): number | null {
  if (!existsSync(pidPath)) return null;
  const pid = Number.parseInt(readFileSync(pidPath, 'utf8'), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** Whether a pid runs `temporal server start-dev` (true where there is no /proc to tell). */
export function looksLikeDevServer(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('start-dev');
  } catch {
    // No /proc (macOS): trust the pid file.
    return true;
  }
}

/** The last lines of the log written since `fromByte`, indented, for an error message. */
export function readLogTail(logPath: string, fromByte: number): string {
  try {
    const size = statSync(logPath).size;
    const start = Math.max(fromByte, size - LOG_TAIL_BYTES);
    const buffer = Buffer.alloc(size - start);
    const fd = openSync(logPath, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, start);
    } finally {
      closeSync(fd);
    }
    const lines = buffer.toString('utf8').trimEnd().split('\n').slice(-LOG_TAIL_LINES);
    return lines.length > 0 && lines[0] !== ''
      ? lines.map((line) => `  ${line}`).join('\n')
      : '  (log is empty)';
  } catch {
    return '  (log unreadable)';
  }
}

/** Removes a file if it is there. */
export function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}
