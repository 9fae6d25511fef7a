/**
 * A store write that must land inside the current activity attempt: a tool's result, after its
 * command ran. Retrying the attempt would run the command again (or tell the model it could not be
 * run), so a store outage (PostgreSQL down or restarting) is waited out here, with backoff and
 * heartbeats, for as long as the attempt may run. Writes retried this way must be idempotent.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/errors';
import {
  STORE_OUTAGE_HEARTBEAT_MS,
  STORE_RETRY_INITIAL_MS,
  STORE_RETRY_MARGIN_MS,
  STORE_RETRY_MAX_MS,
} from '../core/limits';

/** Node's codes of a connection that failed or broke. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

/** PostgreSQL's SQLSTATEs of a server that is going, gone or not there yet. */
const OUTAGE_SQLSTATES = /^(08|57P0[1-4]|53300)/;

/** What pg and Node say when the connection to the database broke (messages, when no code is set). */
const OUTAGE_MESSAGES =
  /Connection terminated|connection (?:is )?closed|the database system is (?:starting up|shutting down|in recovery mode)|Client has encountered a connection error|timeout exceeded when trying to connect/i;

/** Whether an error says the store is out of reach (worth waiting for), not that the write is wrong. */
export function isStoreOutage(err: unknown): boolean {
  for (let current = err, depth = 0; current && depth < 5; depth += 1) {
    const e = current as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof e.code === 'string' && (CONNECTION_CODES.has(e.code) || OUTAGE_SQLSTATES.test(e.code)))
      return true;
    if (typeof e.message === 'string' && OUTAGE_MESSAGES.test(e.message)) return true;
    // An AggregateError (every address of localhost refused) carries the codes in its errors.
    if (Array.isArray(e.errors) && e.errors.some(isStoreOutage)) return true;
    current = e.cause;
  }
  return false;
}

/** What the retry loop needs from the activity it runs in. */
export interface OutageContext {
  /** Fires when the attempt is cancelled or timed out: then the loop stops. */
  signal: AbortSignal;
  /** Keeps the attempt alive while the store is away; details say why it waits. */
  heartbeat: (details: StoreOutageHeartbeat) => void;
  /** When the attempt must have finished (ms since the epoch). */
  deadlineMs: number;
}

/** The heartbeat details while a write waits for the store. */
export interface StoreOutageHeartbeat {
  storeOutage: { what: string; tries: number; lastError: string };
}

/** The typed failure of a write that the store never took within the attempt. */
export function storeUnavailable(what: string, err: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.StoreUnavailable,
    message: `session store: ${what}: ${err instanceof Error ? err.message : String(err)}`,
    nonRetryable: false,
    cause: err instanceof Error ? err : undefined,
  });
}

/**
 * Runs `write` until it succeeds. A store outage is retried (backoff STORE_RETRY_INITIAL_MS doubling
 * to STORE_RETRY_MAX_MS, heartbeating meanwhile) until the attempt's deadline or its cancellation,
 * then thrown as StoreUnavailable; any other error is thrown at once.
 */
export async function untilStored<T>(
  what: string,
  context: OutageContext,
  write: () => Promise<T>,
): Promise<T> {
  let tries = 0;
  let delay = STORE_RETRY_INITIAL_MS;
  let heartbeat: NodeJS.Timeout | undefined;
  try {
    for (;;) {
      tries += 1;
      try {
        return await write();
      } catch (err) {
        if (!isStoreOutage(err)) throw err;
        const details: StoreOutageHeartbeat = {
          storeOutage: { what, tries, lastError: err instanceof Error ? err.message : String(err) },
        };
        context.heartbeat(details);
        // The write itself may hang while the server comes back: the attempt stays alive meanwhile.
        heartbeat ??= setInterval(() => context.heartbeat(details), STORE_OUTAGE_HEARTBEAT_MS);
        if (context.signal.aborted || Date.now() + delay > context.deadlineMs - STORE_RETRY_MARGIN_MS) {
          throw storeUnavailable(what, err);
        }
        await sleep(delay, context.signal);
        delay = Math.min(delay * 2, STORE_RETRY_MAX_MS);
      }
    }
  } finally {
    clearInterval(heartbeat);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * The same activities, with a store outage thrown as the typed StoreUnavailable: the workflow's store
 * calls (local activities) then tell an outage from a wrong write, and wait out only the former.
 */
export function typingStoreOutages<T extends object>(activities: T): T {
  const typed: Record<string, unknown> = {};
  for (const [name, activity] of Object.entries(activities)) {
    if (typeof activity !== 'function') {
      typed[name] = activity;
      continue;
    }
    typed[name] = async (...args: unknown[]) => {
      try {
        return await activity(...args);
      } catch (err) {
        if (err instanceof ApplicationFailure || !isStoreOutage(err)) throw err;
        throw storeUnavailable(name, err);
      }
    };
  }
  return typed as T;
}
