/**
 * The goal's state and every change to it that needs no I/O: the clock that pauses, steering that
 * waits for the next step boundary, app commands that change limits or the model, approvals and
 * the jobs registry. The workflow wires its handlers to this class and runs the activities; the
 * class itself knows nothing of Temporal, so it is unit-tested as plain code.
 */
import type { LimitsPatch } from './app-commands';
import {
  FINAL_STATUSES,
  type GoalState,
  type GoalStatus,
  noteAction,
  type PendingApproval,
  type SteeringRequest,
} from './goal';
import { checkStopRules, type StopDecision } from './goal-rules';
import { type GoalSnapshot, snapshotOf } from './goal-snapshot';
import { addJob, type JobRecord, type JobStatus, markJobs, nextJobId } from './jobs-registry';
import { JOB_COMMAND_MAX_CHARS, REASON_MAX_CHARS } from './limits';
import { budgetLine, budgetView, hasCap, spentOf, usd } from './spend-cap';
import { clip, plural } from './text';

/** The longest steering message accepted, in characters (a pasted log belongs in a file). */
export const MAX_STEERING_CHARS = 32_000;
/** Delivered steering ids remembered to drop a message sent twice. */
export const STEERING_IDS_KEPT = 100;

/** Raised by the checks that update validators run; the message is shown to the sender. */
export class GoalRequestError extends Error {
  readonly type = 'GoalRequestError';
  constructor(message: string) {
    super(message);
    this.name = 'GoalRequestError';
  }
}

/** A goal's control state, owned by its workflow. */
export class GoalSession {
  state: GoalState;
  /** The kept-progress summary of an interrupted goal (spec S-SAVE). */
  keptProgress: string | null = null;
  /** When the goal's clock last started, or null while it is stopped (paused, waiting). */
  private activeSince: number | null;

  constructor(
    state: GoalState,
    private readonly now: () => number,
  ) {
    this.state = state;
    this.activeSince = now();
  }

  /** Time the goal has been working, over all executions; pauses and waits do not count. */
  elapsedMs(): number {
    const running = this.activeSince === null ? 0 : this.now() - this.activeSince;
    return this.state.elapsedMsBefore + running;
  }

  /** Stops the clock (pause, a wait for a human or at a limit). */
  stopClock(): void {
    if (this.activeSince === null) return;
    this.state = { ...this.state, elapsedMsBefore: this.elapsedMs() };
    this.activeSince = null;
  }

  /** Starts the clock again. */
  startClock(): void {
    if (this.activeSince === null) this.activeSince = this.now();
  }

  /** Whether the clock runs. */
  get clockRunning(): boolean {
    return this.activeSince !== null;
  }

  /** Time left before the time limit, in ms (0 when it has passed). */
  remainingMs(): number {
    return Math.max(0, this.state.goal.limits.maxMinutes * 60_000 - this.elapsedMs());
  }

  /** The state with elapsed time folded in, as it is saved or carried over continue-as-new. */
  savedState(): GoalState {
    return { ...this.state, elapsedMsBefore: this.elapsedMs() };
  }

  /** The snapshot that `status`, `watch` and the Web UI show. */
  snapshot(workflowId: string): GoalSnapshot {
    return { ...snapshotOf(this.state, workflowId, this.elapsedMs()), keptProgress: this.keptProgress };
  }

  /** Adds a line to the recent-activity log. */
  note(text: string): void {
    this.state = noteAction(this.state, text);
  }

  /** Sets the status (and its reason). */
  setStatus(status: GoalStatus, reason: string | null = null): void {
    // A failure's reason can be a provider's whole error page: the state keeps its start.
    const kept = reason ? clip(reason, REASON_MAX_CHARS) : reason;
    this.state = { ...this.state, status, reason: kept };
  }

  /** Whether the goal has ended. */
  get ended(): boolean {
    return (
      FINAL_STATUSES.includes(this.state.status) &&
      this.state.status !== 'limit_reached' &&
      this.state.status !== 'budget_reached'
    );
  }

  /** Why the goal must stop now, or null. */
  stopDecision(): StopDecision | null {
    return checkStopRules(this.state, this.elapsedMs());
  }

  // --- Steering (spec F-CMDS) -------------------------------------------------------------

  /** Throws when a steering message cannot be accepted. */
  checkSteering(request: SteeringRequest): void {
    if (!request.id || request.id.length > 100) throw new GoalRequestError('a steering message needs an id');
    if (request.text.trim() === '') throw new GoalRequestError('the steering message is empty');
    if (request.text.length > MAX_STEERING_CHARS) {
      throw new GoalRequestError(
        `the steering message has ${request.text.length} characters; at most ${MAX_STEERING_CHARS} are accepted (put long text in a file in the workspace and point to it)`,
      );
    }
    this.checkOpen('steer');
  }

  /** Queues a message for the next step boundary; false when this id was already seen. */
  queueSteering(request: SteeringRequest): boolean {
    if (this.knowsSteering(request.id)) return false;
    this.state = { ...this.state, pendingSteering: [...this.state.pendingSteering, request] };
    return true;
  }

  /** Whether a message with this id is queued or was delivered. */
  knowsSteering(id: string): boolean {
    return this.state.steeringIds.includes(id) || this.state.pendingSteering.some((p) => p.id === id);
  }

  /** The queued messages, in arrival order. */
  get pendingSteering(): SteeringRequest[] {
    return this.state.pendingSteering;
  }

  /**
   * Takes every queued message off the queue, for a goal that ends before its next step: they are
   * not carried into a later resume, where they would arrive out of context.
   */
  dropPendingSteering(): SteeringRequest[] {
    const dropped = this.state.pendingSteering;
    if (dropped.length > 0) this.state = { ...this.state, pendingSteering: [] };
    return dropped;
  }

  /** Marks a queued message delivered. */
  steeringDelivered(id: string): void {
    this.state = {
      ...this.state,
      pendingSteering: this.state.pendingSteering.filter((p) => p.id !== id),
      steeringIds: [...this.state.steeringIds.filter((known) => known !== id), id].slice(-STEERING_IDS_KEPT),
    };
  }

  // --- App commands ------------------------------------------------------------------------

  /** Throws when the goal is over and cannot take a request. */
  checkOpen(what: string): void {
    if (this.ended) {
      throw new GoalRequestError(
        `the goal is ${this.state.status}; it cannot ${what}. Resume it with: goalrun resume ${this.state.goal.sessionId} --message "…"`,
      );
    }
  }

  /** `/pause`: the goal finishes its current step, then waits. */
  pause(): string {
    if (this.state.paused) return 'the goal is already paused';
    this.state = { ...this.state, paused: true };
    this.note('pause requested');
    return 'pausing: a running model call is stopped (its step runs again on unpause) and a running tool finishes; then the goal waits until unpause (its time limit stops meanwhile)';
  }

  /** `/unpause`. */
  unpause(): string {
    if (!this.state.paused) return 'the goal is not paused';
    this.state = { ...this.state, paused: false };
    this.note('unpaused');
    return 'unpaused: the goal goes on';
  }

  /** `/limits`: raises or lowers limits; says what changed and whether the goal can go on. */
  setLimits(patch: LimitsPatch): string {
    const before = this.state.goal.limits;
    const limits = { ...before, ...patch };
    this.state = { ...this.state, goal: { ...this.state.goal, limits } };
    const changed = [
      patch.maxSteps !== undefined ? `max_steps ${before.maxSteps} → ${limits.maxSteps}` : null,
      patch.maxIterations !== undefined
        ? `max_iterations ${before.maxIterations} → ${limits.maxIterations}`
        : null,
      patch.maxMinutes !== undefined ? `max_minutes ${before.maxMinutes} → ${limits.maxMinutes}` : null,
      patch.maxCostUsd !== undefined
        ? `max_cost_usd ${before.maxCostUsd === undefined ? 'none' : usd(before.maxCostUsd)} → ${usd(patch.maxCostUsd)}`
        : null,
      patch.maxTokens !== undefined ? `max_tokens ${before.maxTokens ?? 'none'} → ${patch.maxTokens}` : null,
    ].filter(Boolean);
    const text = `limits changed: ${changed.join(', ')}`;
    this.note(text);
    const stop = this.stopDecision();
    if (stop?.status === 'limit_reached') return `${text}; still at a limit: ${stop.reason}`;
    if (hasCap(limits))
      return `${text}; budget: ${budgetLine(budgetView(spentOf(this.state), null, limits))}`;
    return text;
  }

  /** `/model`: the next step uses this model. */
  setModel(model: string): string {
    const previous = this.state.goal.model;
    this.state = { ...this.state, goal: { ...this.state.goal, model }, modelNote: null };
    const text = `model switched from ${previous} to ${model}`;
    this.note(text);
    return text;
  }

  /** `/rename`. */
  rename(title: string): string {
    this.state = { ...this.state, goal: { ...this.state.goal, name: title } };
    this.note(`renamed to "${title}"`);
    return `session renamed to "${title}"`;
  }

  // --- Approvals ---------------------------------------------------------------------------

  /** Records an escalation request that waits for a human. */
  requestApproval(
    request: Omit<PendingApproval, 'requestedAtMs' | 'deadlineMs'>,
    timeoutMinutes: number,
  ): void {
    const now = this.now();
    this.state = {
      ...this.state,
      approval: { ...request, requestedAtMs: now, deadlineMs: now + timeoutMinutes * 60_000 },
      status: 'waiting_approval',
      reason: `waiting for approval to run outside the sandbox: ${request.command}`,
    };
    this.note(`waiting for approval: ${request.command}`);
  }

  /** Throws when there is no escalation to answer. */
  checkApprovalAnswer(): void {
    if (!this.state.approval) throw new GoalRequestError('no command is waiting for approval');
  }

  /** Clears the pending escalation and goes back to running. */
  approvalAnswered(decision: 'approved' | 'denied', why: string): void {
    const command = this.state.approval?.command ?? '';
    this.state = { ...this.state, approval: null, status: 'running', reason: null };
    this.note(`${decision}: ${command}${why ? ` (${why})` : ''}`);
  }

  // --- Jobs (spec S-JOBS) --------------------------------------------------------------------

  /** The id the next background job gets. */
  nextJobId(): string {
    return nextJobId(this.state.jobs);
  }

  /** Records a started job. */
  jobStarted(job: Omit<JobRecord, 'status' | 'startedAtMs'>): void {
    const command = clip(job.command, JOB_COMMAND_MAX_CHARS);
    this.state = {
      ...this.state,
      jobs: addJob(this.state.jobs, { ...job, command, status: 'running', startedAtMs: this.now() }),
    };
  }

  /** Records the end of jobs. */
  jobsEnded(ids: string[] | 'all', status: JobStatus, exitCode?: number | null): void {
    this.state = { ...this.state, jobs: markJobs(this.state.jobs, ids, status, exitCode) };
  }

  /** The job of that id. */
  job(jobId: string): JobRecord | undefined {
    return this.state.jobs.find((job) => job.jobId === jobId);
  }
}

/** A one-line summary of a goal's counters, for notes. */
export function countersText(state: GoalState): string {
  return `${plural(state.steps, 'step')}, ${plural(state.iteration, 'iteration')}`;
}
