/**
 * A store outage is a wait, never a failure (issue 24 item 5, patch store-outage-wait). Each store
 * call of the workflow is a local activity that retries for STORE_CALL_WINDOW_MS; when it gives up
 * on an outage (a StoreUnavailable failure, or a timeout: those calls take milliseconds), the call is
 * made again, for as long as the store stays away. Meanwhile a goal that is still going shows
 * `waiting_store` (state query, GoalStatus search attribute); the status it had comes back with the
 * store. A goal that already ended keeps its ending status: only its last writes wait. A model step
 * that gave up on a StoreUnavailable (its own reads and writes wait inside each attempt) is taken
 * again the same way.
 */
import { log, sleep, TimeoutFailure } from '@temporalio/workflow';
import { FailureType } from '../core/errors';
import { FINAL_STATUSES, type GoalStatus } from '../core/goal';
import { STORE_WAIT_PAUSE_MS } from '../core/limits';
import type { storeActivities } from './activities-proxy';
import { failureType, innermostMessage } from './failures';
import type { GoalRun, StoreWaitOptions } from './goal-run-port';
import { PATCH } from './patches';

/** Whether a store call failed because the store was out of reach, not because the call was wrong. */
export function isStoreOutageFailure(err: unknown, options: StoreWaitOptions = {}): boolean {
  if (failureType(err) === FailureType.StoreUnavailable) return true;
  if (options.timeoutIsOutage === false) return false;
  for (
    let current = err as { cause?: unknown } | undefined;
    current;
    current = current.cause as typeof current
  ) {
    if (current instanceof TimeoutFailure) return true;
  }
  return false;
}

/** What the wait needs of a run. */
type WaitingRun = Pick<GoalRun, 'session' | 'state' | 'features' | 'publish'>;

/** The status a goal had before it waited for the store, while it waits. */
interface Before {
  status: GoalStatus;
  reason: string | null;
}

/** The workflow's store calls of one run, each waiting out a store outage. */
export class StoreWait {
  /** Calls that wait for the store right now, and the status to give back when the last one is through. */
  private waiting = 0;
  private before: Before | null = null;

  constructor(private readonly run: WaitingRun) {}

  /** storeActivities, each call retried across store outages (the run's patch allowing). */
  calls(activities: typeof storeActivities): typeof storeActivities {
    return new Proxy(activities, {
      get: (target, name) => {
        const activity = Reflect.get(target, name) as (...args: unknown[]) => Promise<unknown>;
        if (typeof name !== 'string' || typeof activity !== 'function') return activity;
        return (...args: unknown[]) => this.untilStored(name, () => activity(...args));
      },
    });
  }

  /** Runs a store call until it gets through a store outage; any other failure is thrown at once. */
  async untilStored<T>(what: string, call: () => Promise<T>, options: StoreWaitOptions = {}): Promise<T> {
    let waited = false;
    try {
      for (;;) {
        try {
          return await call();
        } catch (err) {
          if (!this.run.features[PATCH.storeOutageWait] || !isStoreOutageFailure(err, options)) throw err;
          if (!waited) this.startWaiting(what, outageText(err));
          waited = true;
          log.warn('the session store is out of reach; the call is made again', { what, error: String(err) });
          await sleep(STORE_WAIT_PAUSE_MS);
        }
      }
    } finally {
      if (waited) this.stopWaiting();
    }
  }

  private startWaiting(what: string, error: string): void {
    this.waiting += 1;
    const { status, reason } = this.run.state;
    // An ended goal keeps its ending: the state query and the workflow's result say why it ended.
    if (this.before || FINAL_STATUSES.includes(status)) return;
    this.before = { status, reason };
    this.run.session.setStatus('waiting_store', `waiting for the store (${what}): ${error}`);
    this.run.session.note(`waiting for the session store: ${error}`);
    this.run.publish();
  }

  private stopWaiting(): void {
    this.waiting -= 1;
    if (this.waiting > 0 || !this.before) return;
    const before = this.before;
    this.before = null;
    // Something else (a pause, the goal's end) may have set a status meanwhile: that one stays.
    if (this.run.state.status !== 'waiting_store') return;
    this.run.session.setStatus(before.status, before.reason);
    this.run.session.note('the session store is back');
    this.run.publish();
  }
}

/** What the status says of an outage: the store's own error, or that it never answered. */
function outageText(err: unknown): string {
  return failureType(err) === FailureType.StoreUnavailable
    ? innermostMessage(err)
    : "no answer from the store within the call's window";
}
