/**
 * Signalling and reaping a whole process group, so that nothing a command started (background
 * jobs, pipelines, subshells) outlives it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { processGroupExists } from '../../system/processes';

/** How often a dying group is checked for survivors. */
const GROUP_POLL_INTERVAL_MS = 25;
/** How long SIGKILLed processes get to disappear before we give up waiting (they may be stuck in the kernel). */
const SIGKILL_WAIT_MS = 5_000;
/**
 * Killed orphans stay zombies until init reaps them, which some inits do only every couple of
 * seconds and some never; waiting this long lets callers usually see the group fully gone.
 */
const ZOMBIE_REAP_WAIT_MS = 3_000;

/** True while any process of the group can still run (zombies do not count). */
export function isGroupAlive(pgid: number): boolean {
  if (!processGroupExists(pgid)) return false;
  return process.platform === 'linux' ? hasRunnableMember(pgid) : true;
}

/**
 * kill(-pgid, 0) also succeeds for zombies, and where no init process reaps orphans (some
 * containers) those linger forever; they hold no resources worth waiting for, so skip them.
 */
function hasRunnableMember(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the parenthesised command name: state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
  }
  return false;
}

/**
 * Sends a signal to every process of the group. Never throws: a group that is already gone (ESRCH)
 * or that we may not signal (EPERM) shows up in the survivor check instead.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH or EPERM: the survivor check that follows tells the caller what is left.
  }
}

/**
 * Waits until the group has no runnable process or `timeoutMs` passes; true when it is gone. Then
 * waits a bounded time for its zombies to be reaped, so the group id is really free.
 */
export async function waitForGroupExit(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isGroupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await delay(GROUP_POLL_INTERVAL_MS);
  }
  const reapDeadline = Date.now() + ZOMBIE_REAP_WAIT_MS;
  while (processGroupExists(pgid) && Date.now() < reapDeadline) await delay(GROUP_POLL_INTERVAL_MS);
  return true;
}

/**
 * Kills the whole group: SIGTERM first so processes can clean up, SIGKILL after `graceMs` for
 * those that ignore it. Resolves true once no process of the group is left.
 */
export async function killProcessGroup(pgid: number, graceMs: number): Promise<boolean> {
  if (!isGroupAlive(pgid)) return true;
  signalGroup(pgid, 'SIGTERM');
  // A stopped process only acts on SIGTERM once it runs again.
  signalGroup(pgid, 'SIGCONT');
  if (await waitForGroupExit(pgid, graceMs)) return true;
  signalGroup(pgid, 'SIGKILL');
  return waitForGroupExit(pgid, SIGKILL_WAIT_MS);
}
