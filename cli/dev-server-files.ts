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
const PANIC_LINE = /^(panic|fatal error): /;
// Go's net error: "listen tcp 127.0.0.1:7233: bind: address already in use".
const ADDRESS_IN_USE = /:(\d+): bind: address already in use/;

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

/** What the log holds from `fromByte` on (at most its last 16 KiB). */
export function readLogSince(logPath: string, fromByte: number): string {
  try {
    const size = statSync(logPath).size;
    const start = Math.max(fromByte, size - LOG_TAIL_BYTES);
    const buffer = Buffer.alloc(Math.max(0, size - start));
    const fd = openSync(logPath, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, start);
    } finally {
      closeSync(fd);
    }
    return buffer.toString('utf8');
  } catch {
    return '';
  }
}

/** The last lines of the log written since `fromByte`, indented, for an error message. */
export function readLogTail(logPath: string, fromByte: number): string {
  const text = readLogSince(logPath, fromByte);
  return text.trim() === '' ? '  (log is empty or unreadable)' : logExcerpt(text);
}

/**
 * The log's last lines, and before them the line that says why the server died when it is further up:
 * a Go panic prints its reason first and then a stack longer than any tail.
 */
export function logExcerpt(text: string, tailLines = LOG_TAIL_LINES): string {
  const lines = text.trimEnd().split('\n');
  const tail = lines.slice(-tailLines);
  const reason = lines.findIndex((line) => PANIC_LINE.test(line));
  const shown = reason !== -1 && reason < lines.length - tailLines ? [lines[reason], '…', ...tail] : tail;
  return shown.map((line) => `  ${line}`).join('\n');
}

/** The port a start lost to another program ("bind: address already in use"), or null. */
export function takenPortIn(text: string): number | null {
  const match = ADDRESS_IN_USE.exec(text);
  return match ? Number(match[1]) : null;
}

/** Removes a file if it is there. */
export function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}
