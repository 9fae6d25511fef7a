/**
 * A lock file that one process at a time holds (created with O_EXCL, holding the holder's pid). A
 * lock whose holder died, or that is older than anything holding it can take, is broken by the next
 * process that wants it.
 */
import { readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { isProcessAlive } from './processes';

/** Takes the lock; false when another live process holds it (a dead or stale holder's lock is removed). */
export function tryAcquireLock(lockPath: string, staleAfterMs: number): boolean {
  try {
    writeFileSync(lockPath, `${process.pid}\n`, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // Break the lock only if its holder is gone or it is far older than any holder takes.
  try {
    const holder = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
    const ageMs = Date.now() - statSync(lockPath).mtimeMs;
    // An empty file is a lock whose holder has created it but not yet written its pid.
    const holderGone = !Number.isNaN(holder) && !isProcessAlive(holder);
    if (holderGone || ageMs > staleAfterMs) unlinkSync(lockPath);
  } catch {
    // The holder released it between our checks; the next attempt will tell.
  }
  return false;
}

/** Releases the lock if this process holds it. */
export function releaseLock(lockPath: string): void {
  try {
    if (Number.parseInt(readFileSync(lockPath, 'utf8'), 10) === process.pid) unlinkSync(lockPath);
  } catch {
    // Already gone.
  }
}
