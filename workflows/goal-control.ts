/**
 * What the goal's main loop asks of whatever carries out the messages a goal receives. Goals started
 * by this build use the command queue (command-queue.ts); goals started before it, which must replay
 * exactly, use the handlers they were started with (legacy/legacy-control.ts).
 */
import type { StopDecision } from '../core/goal-rules';
import type { CapStop } from '../core/spend-cap';
import type { ApprovalAnswer } from './definitions';

/** The message path seen from inside a step. */
export interface StepControl {
  /**
   * Awaits a long activity of a step while requests that need no step boundary keep being carried
   * out. `interrupt`, when it turns true, makes `act` run once (e.g. to cancel a model call).
   */
  serve<T>(work: Promise<T>, interrupt?: { when: () => boolean; act: () => void }): Promise<T>;
  /** Waits inside a step until `ready` (or the timeout), serving requests meanwhile; false on timeout. */
  waitInStep(ready: () => boolean, timeoutMs: number): Promise<boolean>;
  /** Where the answer to the escalation a step waits for arrives. */
  readonly approvals: ApprovalBox;
}

/** Holds a human's answer to an escalation out of the sandbox until the waiting step takes it. */
export interface ApprovalBox {
  answer: ApprovalAnswer | null;
}

/** The message path seen from the main loop. */
export interface GoalControl extends StepControl {
  /** Runs everything due between steps (steering, commands, compaction); a paused goal waits here. */
  atStepBoundary(): Promise<void>;
  /** Whether a /clear waits for the loop to end this session. */
  readonly clearRequested: boolean;
  /** Ends this session in favour of a fresh one (/clear). */
  clear(): Promise<void>;
  /** Waits at a limit for it to be raised; true when the goal may go on, false when it ended. */
  waitAtLimit(stop: StopDecision): Promise<boolean>;
  /**
   * Waits at the money or token cap for a raise; true when the goal may go on, false when it ended.
   * Only the command queue has it (the cap is a feature of its runs).
   */
  waitAtBudget?(stop: CapStop): Promise<boolean>;
  /** Carries out everything queued before continue-as-new; false when a /clear came instead. */
  beforeContinueAsNew(): Promise<boolean>;
  /** The run is about to end (returned, failed or cancelled): answers what still waits. */
  beforeRunEnds(): Promise<void>;
}
