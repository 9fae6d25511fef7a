/**
 * The dev server's files as a process manager needs them: the start lock, the pid file, the log's
 * tail for an error message, and whether a pid is a live dev server.
 */
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';

/** A start lock older than any startup can take is broken: its holder died without releasing it. */
export const STALE_LOCK_MS = 60_000;
const LOG_TAIL_LINES = 25;
const LOG_TAIL_BYTES = 16 * 1024;

/** Takes the start lock (one starter at a time); false when another live process holds it. */
export function tryAcquireLock(lockPath: string): boolean {
  try {
    writeFileSync(lockPath, `${process.pid}\n`, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // Break the lock only if its holder is gone or it is far older than any startup can take.
  try {
    const holder = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
    const ageMs = Date.now() - statSync(lockPath).mtimeMs;
    // An empty file is a lock whose holder has created it but not yet written its pid.
    const holderGone = !Number.isNaN(holder) && !isProcessAlive(holder);
    if (holderGone || ageMs > STALE_LOCK_MS) unlinkSync(lockPath);
  } catch {
    // The holder released it between our checks; the next attempt will tell.
  }
  return false;
}

/** Releases the start lock if this process holds it. */
export function releaseLock(lockPath: string): void {
  try {
    if (Number.parseInt(readFileSync(lockPath, 'utf8'), 10) === process.pid) unlinkSync(lockPath);
  } catch {
    // Already gone.
  }
}

/** The pid in a pid file, or null. */
export function readPidFile(pidPath: string): number | null {
  if (!existsSync(pidPath)) return null;
  const pid = Number.parseInt(readFileSync(pidPath, 'utf8'), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** Whether a pid is a live process (a zombie is not). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie (exited, not yet reaped) still answers signal 0 but is dead for our purposes.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
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
