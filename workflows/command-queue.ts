/**
 * The goal's command queue (Temporal's safe-message-handlers shape): handlers (handlers.ts) check a
 * request and put it in the inbox; only the main loop carries requests out — between steps, in every
 * wait (paused, at a limit, for an approval, before continue-as-new), and while a step's model call,
 * tool or summarizer runs, for the requests that need no step boundary. No handler awaits an
 * activity, a failed command becomes a notice, and every waiting handler is answered before the run
 * ends.
 */
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  isCancellation,
  workflowInfo,
} from '@temporalio/workflow';
import type { GoalStatus } from '../core/goal';
import { describeRequest, GoalInbox, type InboxPhase, type InboxRequest } from '../core/goal-inbox';
import { undeliveredSteeringText } from '../core/goal-messages';
import type { StopDecision } from '../core/goal-rules';
import type { CapStop } from '../core/spend-cap';
import { plural } from '../core/text';
import { enterPause, resumeFromPause, startFreshSession, writeNotice } from './boundary';
import { waitAtBudget } from './budget-gate';
import { type CommandOutcome, carryOut, refusalText } from './commands';
import { autoCompact, ensureBudget } from './compaction';
import { type DailyGate, reserveDaily } from './daily-budget-gate';
import type { SteerResult } from './definitions';
import { probeAtBoundary } from './failover';
import { innermostMessage } from './failures';
import { compactionHostOf } from './goal-compaction-host';
import type { ApprovalBox, GoalControl } from './goal-control';
import { endGoal } from './goal-ending';
import type { GoalRun } from './goal-run-port';
import { type LimitWaitHooks, waitAtLimit } from './limit-gate';
import { PATCH } from './patches';
import { type RequestAnswer, RequestAnswers } from './request-answers';

/** What an update is told while the run drains for continue-as-new (cli/update-across-runs.ts sends it again). */
export const MOVING_ON_REFUSAL = 'the goal is moving on to its next run (continue-as-new); send this again';

/** The command queue of one run. */
export class CommandQueue implements GoalControl {
  readonly approvals: ApprovalBox = { answer: null };
  readonly inbox: GoalInbox;
  private readonly answers = new RequestAnswers();
  /** Transcript notices of commands carried out during a step, written at the next boundary. */
  private readonly notices: string[] = [];
  /** A /clear: the ids of the requests waiting for the fresh session's id. */
  private readonly clearing: { requested: boolean; waiting: string[] } = { requested: false, waiting: [] };
  /** Set once the goal has decided to end: from then on requests are refused. */
  private endingAs: GoalStatus | null = null;
  /**
   * Set while the run drains for continue-as-new: updates are refused then (a signal's request waits
   * in the inbox and goes to the next run), so a steady stream of requests cannot hold the run open.
   */
  private movingOn = false;
  private counter = 0;
  /** What the wait in progress while an activity runs wakes for (untilSettledOrDue), or null. */
  private serving: (() => boolean) | null = null;
  /** The run's one condition that wakes such a wait, while it is blocked. */
  private wakeUp: Promise<void> | null = null;
  /** How the waits at a boundary (a limit, the money cap, the daily budget) reach this queue. */
  private readonly boundaryWait: LimitWaitHooks = {
    waitUntil: (ready, timeoutMs) => this.waitUntil(ready, 'boundary', timeoutMs),
    clearRequested: () => this.clearing.requested,
  };

  constructor(private readonly run: GoalRun) {
    this.inbox = new GoalInbox(
      () => run.state.inbox ?? [],
      (inbox) => {
        run.state = { ...run.state, inbox };
      },
    );
    run.serveWork = (work) => this.serve(work);
    run.onEnding = async (status) => this.goalEnding(status);
    // A run continued from a goal of an older build may carry steering it queued the old way.
    for (const request of run.session.dropPendingSteering()) {
      this.inbox.add({ kind: 'steer', ...request });
    }
  }

  // --- What handlers use ----------------------------------------------------------------------

  /** An id for a request whose sender gave none (the update's own id when there is one). */
  newId(prefix: string, updateId?: string): string {
    return updateId ? `${prefix}:${updateId}` : `${prefix}:${++this.counter}`;
  }

  /** Why the goal refuses a request sent this way now, or null. */
  refusal(via: 'update' | 'signal'): string | null {
    if (this.endingAs) {
      return `the goal is ending (${this.endingAs}); it takes no more requests. To give it a new instruction: goalrun resume ${this.run.state.goal.sessionId} --message "…"`;
    }
    if (this.movingOn && via === 'update') return MOVING_ON_REFUSAL;
    return null;
  }

  /** Queues a request and waits until the main loop has carried it out; a refusal fails the update. */
  async submit<T>(request: InboxRequest): Promise<T> {
    if (!this.inbox.has(request.id) && !this.answers.has(request.id)) this.inbox.add(request);
    return this.answerOf<T>(request.id);
  }

  /** Waits for the answer to a request already queued (a message sent twice, by update and signal). */
  answerOf<T>(id: string): Promise<T> {
    return this.answers.waitFor<T>(id);
  }

  /** A steering id seen before: its earlier answer, or null for a new one. */
  repeatedSteering(id: string): Promise<SteerResult> | SteerResult | null {
    if (this.inbox.has(id) || this.answers.has(id)) return this.answerOf<SteerResult>(id);
    if (!this.run.state.steeringIds.includes(id)) return null;
    return { kind: 'message', seq: this.run.deliveredSteering.get(id) ?? -1, duplicate: true };
  }

  // --- The loop's side: GoalControl -----------------------------------------------------------

  get clearRequested(): boolean {
    return this.clearing.requested;
  }

  async atStepBoundary(): Promise<void> {
    const { run } = this;
    const host = compactionHostOf(run);
    for (;;) {
      await this.runDue('boundary');
      await this.writeNotices();
      // After the cooldown the next step probes the primary; its budget is resolved just below.
      await probeAtBoundary(run);
      await ensureBudget(host);
      await autoCompact(host, run.state.steps + 1);
      if (this.clearing.requested) return;
      if (!run.state.paused) {
        if (run.state.status === 'paused') await resumeFromPause(run);
        return;
      }
      if (run.state.status !== 'paused') await enterPause(run);
      await condition(
        () =>
          !run.state.paused ||
          this.inbox.hasDue('boundary') ||
          this.notices.length > 0 ||
          this.clearing.requested,
      );
    }
  }

  async clear(): Promise<void> {
    const sessionId = await startFreshSession(this.run);
    const text = `cleared; the goal goes on in session ${sessionId}`;
    await endGoal(this.run, 'cleared', text);
    for (const id of this.clearing.waiting.splice(0)) {
      this.answer(id, {
        ok: true,
        value: { kind: 'command', command: 'clear', text, newSessionId: sessionId },
      });
    }
  }

  waitAtLimit(stop: StopDecision): Promise<boolean> {
    return waitAtLimit(this.run, stop, this.boundaryWait);
  }

  async waitAtBudget(stop: CapStop): Promise<boolean> {
    return waitAtBudget(this.run, stop, this.boundaryWait);
  }

  async reserveDaily(): Promise<DailyGate> {
    return reserveDaily(this.run, {
      ...this.boundaryWait,
      continueAsNewSuggested: () => workflowInfo().continueAsNewSuggested,
    });
  }

  async beforeContinueAsNew(): Promise<boolean> {
    for (;;) {
      await this.runDue('boundary');
      await this.writeNotices();
      if (this.clearing.requested) {
        this.movingOn = false;
        return false;
      }
      // Every update is answered; what signals queued since waits in the inbox, which the next run gets.
      if (allHandlersFinished()) return true;
      this.movingOn = true;
      await condition(
        () =>
          allHandlersFinished() ||
          this.inbox.hasDue('boundary') ||
          this.notices.length > 0 ||
          this.clearing.requested,
      );
    }
  }

  async beforeRunEnds(): Promise<void> {
    this.goalEnding(this.endingAs ?? this.run.state.status);
    await condition(allHandlersFinished);
  }

  async serve<T>(work: Promise<T>, interrupt?: { when: () => boolean; act: () => void }): Promise<T> {
    let settled = false;
    // Observed here, so a failure of `work` is never an unhandled rejection: the caller gets it below.
    const done = work.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    let interrupted = false;
    const interruptNow = () => !interrupted && (interrupt?.when() ?? false);
    const due = () => this.inbox.hasDue('step') || interruptNow();
    const raced = this.run.features[PATCH.serveByPromise];
    for (;;) {
      // Not cancellable: a cancelled step cancels `work`, and its cancellation is what ends the wait.
      if (raced) await CancellationScope.nonCancellable(() => this.untilSettledOrDue(done, due));
      else await CancellationScope.nonCancellable(() => condition(() => settled || due()));
      if (settled) return work;
      if (interruptNow()) {
        interrupted = true;
        interrupt!.act();
        continue;
      }
      await CancellationScope.nonCancellable(() => this.runDue('step'));
    }
  }

  /**
   * Waits until `done` settles or `due` holds. The activity's own promise wakes the loop in the call
   * that delivers its result; a `condition` on a flag would wake it only in the SDK's next pass over
   * the blocked conditions: one more call into the workflow's context, with its watchdog thread, for
   * every activity (docs/performance.md). The wake-up condition is one for the run, not one per wait:
   * it holds only while a wait is on, so nothing is left blocked or cancelled when `done` wins.
   */
  private async untilSettledOrDue(done: Promise<void>, due: () => boolean): Promise<void> {
    if (due()) return;
    const outer = this.serving;
    this.serving = due;
    try {
      this.wakeUp ??= condition(() => this.serving?.() ?? false).then(() => {
        this.wakeUp = null;
      });
      await Promise.race([done, this.wakeUp]);
    } finally {
      this.serving = outer;
    }
  }

  async waitInStep(ready: () => boolean, timeoutMs: number): Promise<boolean> {
    return this.waitUntil(ready, 'step', timeoutMs);
  }

  // --- Carrying requests out ------------------------------------------------------------------

  /** Waits until `ready` or the timeout, carrying out what is due meanwhile; false on timeout. */
  private async waitUntil(ready: () => boolean, phase: InboxPhase, timeoutMs?: number): Promise<boolean> {
    const deadline = timeoutMs === undefined ? null : Date.now() + timeoutMs;
    for (;;) {
      if (ready()) return true;
      if (this.inbox.hasDue(phase)) {
        if (phase === 'step') await CancellationScope.nonCancellable(() => this.runDue(phase));
        else await this.runDue(phase);
        continue;
      }
      if (phase === 'boundary' && this.notices.length > 0) {
        await this.writeNotices();
        continue;
      }
      const wake = () =>
        ready() || this.inbox.hasDue(phase) || (phase === 'boundary' && this.notices.length > 0);
      if (deadline === null) {
        await condition(wake);
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0 || !(await condition(wake, left))) return ready();
    }
  }

  /**
   * Carries out the requests due in this phase that were queued when it began, oldest first: what
   * arrives meanwhile waits for the next look, so a stream of requests cannot keep the goal from its step.
   */
  private async runDue(phase: InboxPhase): Promise<void> {
    for (let left = this.inbox.requests.length; left > 0; left--) {
      // After a /clear nothing more runs here: what is left is answered as this session ends.
      if (this.clearing.requested || this.endingAs) return;
      const request = this.inbox.takeNext(phase);
      if (!request) return;
      await this.carryOutOne(request);
    }
  }

  private async carryOutOne(request: InboxRequest): Promise<void> {
    let outcome: CommandOutcome;
    try {
      outcome = await carryOut(this.run, this, request);
    } catch (err) {
      const message = innermostMessage(err);
      this.answer(request.id, { ok: false, message });
      if (isCancellation(err)) throw err;
      const text = `${describeRequest(request)} failed: ${message}`;
      this.run.session.note(text);
      this.notices.push(text);
      return;
    }
    if (outcome.kind === 'answer') this.answer(request.id, { ok: true, value: outcome.value });
    else if (outcome.kind === 'refused') this.answer(request.id, { ok: false, message: outcome.message });
    else if (outcome.kind === 'clear') {
      this.clearing.requested = true;
      this.clearing.waiting.push(request.id);
    }
    if (outcome.notice) this.notices.push(outcome.notice);
  }

  /** Notices of commands carried out during a step, and of requests dropped on a full queue. */
  private async writeNotices(): Promise<void> {
    const dropped = this.run.state.droppedRequests ?? 0;
    if (dropped > 0) {
      this.run.state = { ...this.run.state, droppedRequests: 0 };
      this.notices.push(
        `${plural(dropped, 'request')} sent while the goal's queue was full ${dropped === 1 ? 'was' : 'were'} dropped`,
      );
    }
    while (this.notices.length > 0) await writeNotice(this.run, this.notices.shift()!);
  }

  /** The goal ends: requests are refused from now on, and each one still queued is answered. */
  private goalEnding(status: GoalStatus): void {
    this.endingAs ??= status;
    for (const request of this.inbox.takeAll()) {
      if (request.kind === 'refused') continue;
      if (request.kind === 'steer') {
        this.run.session.note(`steering from ${request.from} not delivered: the goal ended (${status})`);
        this.answer(request.id, {
          ok: true,
          value: {
            kind: 'message',
            seq: -1,
            undelivered: undeliveredSteeringText(status, this.run.state.goal.sessionId),
          } satisfies SteerResult,
        });
        continue;
      }
      this.answer(request.id, { ok: false, message: refusalText(request, status) });
    }
  }

  private answer(id: string, answer: RequestAnswer): void {
    this.answers.set(id, answer);
  }
}
