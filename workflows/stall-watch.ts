/**
 * The workflow's own stall watch (issue 24 item 6): a running goal with no step finished for
 * stalled_after_minutes (10 by default) shows `stalled`, in its state and the GoalStatus search
 * attribute, and a checkpoint tells the notify hooks; the next finished step sets it running again.
 * One durable timer per quiet period, not one per step: the watch sleeps until the last step's time
 * plus the limit and looks again. A wait with a status of its own (paused, at a limit or a cap,
 * waiting for a quota or an approval) is not a stall: the count starts again when the goal runs.
 * Runs of PATCH.stalledStatus only (the timer is a new command).
 */
import { condition, isCancellation, log, sleep } from '@temporalio/workflow';
import { DEFAULT_STALLED_AFTER_MINUTES } from '../core/limits';
import { stallDueInMs, stalledReason } from '../core/liveness';
import type { GoalRun } from './goal-run-port';

/** The event a checkpoint carries when the goal is marked stalled, or runs again. */
export const STALL_EVENTS = { stalled: 'stalled', running: 'stall-ended' } as const;

/** Watches one run for stalls; `stepFinished` after every step. */
export class StallWatch {
  private lastStepMs = Date.now();
  private stopped = false;

  constructor(private readonly run: GoalRun) {}

  private get afterMinutes(): number {
    return this.run.state.goal.stalledAfterMinutes ?? DEFAULT_STALLED_AFTER_MINUTES;
  }

  /** Starts the watch beside the main loop; it ends with the run (or at `stop`). */
  start(): void {
    this.watch().catch((err) => {
      // A cancelled goal cancels the timer: that ends the watch, not the goal.
      if (!isCancellation(err)) log.warn('the stall watch stopped', { error: String(err) });
    });
  }

  /** The run is ending: the watch marks nothing more. */
  stop(): void {
    this.stopped = true;
  }

  /** A step finished: the quiet period restarts, and a stalled goal runs again (a checkpoint says so). */
  async stepFinished(): Promise<void> {
    this.lastStepMs = Date.now();
    if (this.run.state.status !== 'stalled') return;
    this.run.session.setStatus('running');
    this.run.session.note('a step finished; running again');
    this.run.publish();
    await this.run.saveState(true, { kind: STALL_EVENTS.running, data: { steps: this.run.state.steps } });
  }

  private async watch(): Promise<void> {
    const { run } = this;
    for (;;) {
      const stallAfterMs = this.afterMinutes * 60_000;
      const left = stallDueInMs(this.lastStepMs, stallAfterMs, Date.now());
      if (left > 0) {
        await sleep(left);
        continue;
      }
      if (this.stopped || run.session.ended) return;
      if (run.state.status !== 'running') {
        // Waiting with a status of its own: no timer until the goal runs again, then a fresh count.
        await condition(() => this.stopped || run.state.status === 'running');
        this.lastStepMs = Math.max(this.lastStepMs, Date.now());
        continue;
      }
      const seen = this.lastStepMs;
      const reason = stalledReason(seen, this.afterMinutes);
      run.session.setStatus('stalled', reason);
      run.session.note(`stalled: ${reason}`);
      run.publish();
      await run.saveState(true, {
        kind: STALL_EVENTS.stalled,
        data: { since: new Date(seen).toISOString() },
      });
      await condition(() => this.stopped || this.lastStepMs !== seen || run.state.status !== 'stalled');
    }
  }
}
