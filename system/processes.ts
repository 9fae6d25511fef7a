/**
 * Whether a process or a process group is still there. One answer for every caller: a process of
 * another user (EPERM) exists; a zombie (exited, not yet reaped) has finished and is not alive; where
 * there is no /proc to tell a zombie apart (macOS), a process that answers signal 0 is alive.
 */
import { readFileSync } from 'node:fs';

/** Whether the kernel knows `pid` (zombies and other users' processes included). */
export function processExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  return answersSignalZero(pid);
}

/** Whether the kernel knows any process of the group `pgid` (zombies included). */
export function processGroupExists(pgid: number): boolean {
  if (!Number.isInteger(pgid) || pgid <= 0) return false;
  return answersSignalZero(-pgid);
}

/** Whether `pid` is a live process: it exists and is not a zombie. */
export function isProcessAlive(pid: number): boolean {
  if (!processExists(pid)) return false;
  if (process.platform !== 'linux') return true;
  const state = processState(pid);
  // No stat: the process went away between the two checks.
  return state !== null && state !== 'Z';
}

/** The state letter of a process in /proc (`R`, `S`, `Z`, …), or null when it has none. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name, in parentheses, may hold spaces and parentheses: the state follows the last `)`.
    const end = stat.lastIndexOf(')');
    return stat.slice(end + 2, end + 3) || null;
  } catch {
    return null;
  }
}

function answersSignalZero(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
