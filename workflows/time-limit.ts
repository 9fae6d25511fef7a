/**
 * The goal's time limit as a durable timer: it fires even when the goal is stuck in one long step,
 * and cancels that step. The timer stops while the goal's clock stops (pause, a wait for a human or
 * at a limit) and is set again, for the time left, when it runs again.
 */
import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';

/** Thrown out of a step that the time limit cut short. */
export class TimeLimitReached extends Error {
  constructor() {
    super('the goal reached its time limit');
    this.name = 'TimeLimitReached';
  }
}

/** The time-limit timer and the scope of the step it may cancel. */
export class TimeLimit {
  private timer: CancellationScope | null = null;
  private step: CancellationScope | null = null;
  private up = false;
  /** The step the timer cut short, if it did: re-arming the timer (a /limits) does not undo that. */
  private cut: CancellationScope | null = null;
  /**
   * Whether a step the timer cut short ends as TimeLimitReached even when /limits re-armed the timer
   * while the step waited for its cancelled activity (goals of the command queue; before it, such a
   * step ended the goal as "cancelled by request").
   */
  cutStaysCut = false;
  /** The scope timers hang from: the workflow's root, so a timer set inside a step outlives the step. */
  private readonly parent = CancellationScope.current();

  /** Sets the timer to fire after `remainingMs` (replacing a running one). */
  arm(remainingMs: number): void {
    this.disarm();
    this.up = false;
    const timer = new CancellationScope({ cancellable: true, parent: this.parent });
    this.timer = timer;
    timer
      .run(() => sleep(remainingMs, { summary: 'goal time limit' }))
      .then(() => {
        if (this.timer !== timer) return;
        this.up = true;
        this.cut = this.step;
        this.step?.cancel();
      })
      .catch(() => undefined);
  }

  /** Stops the timer (a stopped clock). */
  disarm(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  /** Whether the timer has fired. */
  get reached(): boolean {
    return this.up;
  }

  /** Runs a step that the time limit may cancel; a cancellation by the limit becomes TimeLimitReached. */
  async runStep<T>(fn: () => Promise<T>): Promise<T> {
    const scope = new CancellationScope();
    this.step = scope;
    try {
      return await scope.run(fn);
    } catch (err) {
      const cutShort = this.cutStaysCut ? this.cut === scope : this.up;
      if (cutShort && isCancellation(err)) throw new TimeLimitReached();
      throw err;
    } finally {
      this.step = null;
      if (this.cut === scope) this.cut = null;
    }
  }
}
