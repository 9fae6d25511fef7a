/**
 * One active operation per session: start, resume, fork and clean (the command and the scheduled
 * retention activity) hold the session's store lock (session-locks.ts) while they change what runs
 * for it, and give it back before following the goal. A second operation on the same session waits a little, then says who
 * holds it.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { ConfigError } from '../core/errors';
import type { SessionStore } from './types';

/** How long an operation's lock lasts if its process dies holding it. */
export const SESSION_LOCK_TTL_MS = 120_000;
/** How long a second operation waits for the lock before it gives up with a clear message. */
export const SESSION_LOCK_WAIT_MS = 30_000;
/** How often a waiting operation tries again. */
const SESSION_LOCK_POLL_MS = 200;

/** A held session lock; release() is safe to call more than once. */
export interface HeldSessionLock {
  sessionId: string;
  holder: string;
  release(): Promise<void>;
}

/** Who this process is, in lock rows: readable in the "busy" message, unique per call. */
export function lockHolderName(): string {
  return `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/** A lock object for a lock already taken (claimSessionName takes it with the new row). */
export function heldLock(store: SessionStore, sessionId: string, holder: string): HeldSessionLock {
  let released = false;
  return {
    sessionId,
    holder,
    async release() {
      if (released) return;
      released = true;
      await store.unlockSession(sessionId, holder);
    },
  };
}

/** Takes the session's lock, waiting up to SESSION_LOCK_WAIT_MS; throws ConfigError naming the holder. */
export async function lockSession(
  store: SessionStore,
  sessionId: string,
  operation: string,
  waitMs = SESSION_LOCK_WAIT_MS,
): Promise<HeldSessionLock> {
  const holder = lockHolderName();
  const deadline = Date.now() + waitMs;
  for (;;) {
    const attempt = await store.tryLockSession(sessionId, operation, holder, SESSION_LOCK_TTL_MS);
    if (attempt.acquired) return heldLock(store, sessionId, holder);
    if (Date.now() >= deadline) {
      const { heldBy } = attempt;
      throw new ConfigError(
        `session ${sessionId} is busy: ${heldBy.holder} has been running "${heldBy.operation}" on it since ${heldBy.acquiredAt.toISOString()}; try again when it is done`,
      );
    }
    await delay(SESSION_LOCK_POLL_MS);
  }
}
