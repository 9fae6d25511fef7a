/**
 * What the gates and steps of the goal loop need of a goal's execution: its state and session, the
 * patched behaviours it takes, its store writes, its time limit, the Web UI. goal-run.ts implements
 * it over Temporal's activities; unit tests implement it with a fake (test/workflow/fake-run.ts), so a
 * gate can be driven without a server. A leaf: it imports nothing of workflows/ but plain data.
 */
import type { createDailyBudgetActivities } from '../activities/daily-budget-activities';
import type { OpenSessionInput, OpenSessionResult, ToolCallRef } from '../activities/types';
import type { GoalState, GoalStatus } from '../core/goal';
import type { GoalSession } from '../core/goal-session';
import type { LedgerEntry } from '../core/ledger';
import type { MessageMeta, StoredMessage } from '../core/messages';
import type { StateWrite } from '../core/state-write';
import type { WorkflowFeatures } from './patches';

/** An event written with a message or a state save. */
export type StoreEvent = { kind: string; data: unknown; key?: string };
/** One event or several. */
export type StoreEvents = StoreEvent | StoreEvent[];

/** The goal's time limit, as the gates stop and restart it (time-limit.ts). */
export interface TimeLimitClock {
  /** Sets the timer to fire after `remainingMs` (replacing a running one). */
  arm(remainingMs: number): void;
  /** Stops the timer (a stopped clock). */
  disarm(): void;
}

/**
 * The store calls a gate makes itself (the rest go through appendMessage and saveState).
 * settleDailyBudget and billedAttempts run to their end even while the goal is being cancelled.
 */
export type RunStore = Pick<
  ReturnType<typeof createDailyBudgetActivities>,
  'reserveDailyBudget' | 'settleDailyBudget' | 'billedAttempts'
>;

/** How a call's failure is read while it waits out a store outage (store-wait.ts). */
export interface StoreWaitOptions {
  /**
   * Whether a timeout counts as an outage: yes for the workflow's store calls, which take
   * milliseconds; no for a model step, whose timeout says the provider or its worker stopped answering.
   */
  timeoutIsOutage?: boolean;
}

/** One execution of a goal, as the gates, steps and message paths see it. */
export interface GoalRun {
  /** The goal's control state and its pure rules. */
  readonly session: GoalSession;
  /** The session's state (the same object as session.state). */
  state: GoalState;
  readonly workflowId: string;
  /** This execution's number: 1 for the first run, one more for each resume. */
  readonly execution: number;
  /** The patched behaviours this run takes (false for the changes made after the build that started it). */
  readonly features: WorkflowFeatures;
  readonly timeLimit: TimeLimitClock;
  /** The store calls of the gates. */
  readonly store: RunStore;
  /**
   * Runs a store call, or an activity whose failure may be a store outage, until it gets through the
   * outage (patch store-outage-wait; store-wait.ts); any other failure is thrown at once.
   */
  untilStored<T>(what: string, call: () => Promise<T>, options?: StoreWaitOptions): Promise<T>;
  /** Tool calls of the running step that have no stored result yet. */
  unanswered: ToolCallRef[];
  /**
   * The answer of the `finish` that ended the goal, held to be stored with the goal-ended checkpoint
   * (PATCH.finishAnsweredAtEnd); answerUnanswered stores it first, as it was.
   */
  heldAnswer: ToolAnswer | null;
  /** Sequence numbers of delivered steering messages, by id, for the updates waiting on them. */
  readonly deliveredSteering: Map<string, number>;
  /** Why a steering message was never delivered (the goal ended first), by id, for the same updates. */
  readonly undeliveredSteering: Map<string, string>;
  /** Whether the session row and the first message exist (a goal cancelled before its start has neither). */
  opened: boolean;
  /** Why this execution takes no more workspace snapshots (a folder that is not a git repository), once known. */
  noSnapshots: string | null;
  /**
   * Whether the tool host has said it holds nothing of this goal (no private /tmp, job or server)
   * since the gathering, with no other call made there: then the goal's end needs no close on it.
   */
  toolHostClean: boolean;
  /**
   * Awaits a long activity while the message path keeps carrying out requests (the command queue sets
   * it; before the command queue, handlers acted on their own and this only awaits).
   */
  serveWork: <T>(work: Promise<T>) => Promise<T>;
  /** Called first when the goal ends; the command queue answers what waits. */
  onEnding: (status: GoalStatus) => Promise<void>;

  /** Publishes the state to the Web UI (search attributes, current details). */
  publish(): void;
  /**
   * Opens a new session: its row, the first message, the initial state; with `also`, the same local
   * activity resolves the model budget and reads the daily cap (PATCH.openInOneCall).
   */
  open(also?: OpenAlso): Promise<OpenSessionResult>;
  /** The state write for the store: only what changed, or everything for a checkpoint. */
  stateWrite(full?: boolean, as?: Partial<GoalState>): StateWrite;
  /** Records that a state write reached the store. */
  stateWritten(write: StateWrite): void;
  /** Stores a message the workflow writes itself, with the state that accounts for it. */
  appendMessage(
    key: string,
    message: StoredMessage,
    extra?: { meta?: MessageMeta; event?: StoreEvents },
    full?: boolean,
  ): Promise<LedgerEntry>;
  /**
   * Saves the state (a checkpoint when `full`), with an optional event in the same transaction; with
   * `answer`, that tool answer is stored by the same local activity, its events before `event`.
   */
  saveState(full: boolean, event?: StoreEvent, answer?: ToolAnswer): Promise<void>;
  /** Answers every tool call of the interrupted step, so no call is left without its result. */
  answerUnanswered(why: string): Promise<void>;
  /** Stores a steering message for the model (spec F-CMDS) and marks it delivered. */
  deliverSteering(request: { id: string; text: string; from: string }): Promise<number>;
  /** Delivers every queued steering message, in the order they arrived. */
  deliverPendingSteering(): Promise<void>;
  /** A foreground process takes the goal's steps (its queue), or gives them back (null). */
  setHost(queue: string | null, from: string): string;
  /** The host stopped taking calls: the goal goes on on the store's workers. */
  releaseHost(host: string, why: string): void;
  /** Kills every running background job (the goal ended or waits at a limit); unreachable hosts make them lost. */
  killJobs(): Promise<void>;
}

/** A tool call's answer built but not yet stored: its key, message and events. */
export interface ToolAnswer {
  key: string;
  message: StoredMessage;
  events: StoreEvents;
}

/** What a new goal's open also asks for (PATCH.openInOneCall). */
export type OpenAlso = Pick<OpenSessionInput, 'budget' | 'dailyCap'>;
