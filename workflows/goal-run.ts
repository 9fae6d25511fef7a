/**
 * One execution of a goal inside its workflow, over Temporal's activities: its session, how it writes
 * to the session store, how it delivers steering, its time limit. It implements the GoalRun port
 * (goal-run-port.ts) that the gates and steps use, and imports none of them: goal-workflow.ts composes
 * it with how a run starts (goal-start.ts), ends (goal-ending.ts) and tells the hooks (goal-hooks.ts).
 * The state and its pure rules live in core/goal-session.ts.
 */
import { CancellationScope, isCancellation, log, workflowInfo } from '@temporalio/workflow';
import type { OpenSessionResult, ToolCallRef } from '../activities/types';
import { initialCompactionState } from '../core/compaction/state';
import { type GoalState, type GoalStatus, initialGoalState, withLaterFields } from '../core/goal';
import { undeliveredSteeringText } from '../core/goal-messages';
import { GoalSession } from '../core/goal-session';
import { runningJobsByProcess } from '../core/jobs-registry';
import type { LedgerEntry } from '../core/ledger';
import { appendLedger, lastSeqOf } from '../core/ledger';
import { ledgerEntryFor } from '../core/ledger-entry';
import { type MessageMeta, type StoredMessage, userText } from '../core/messages';
import { continueAsNewPayload } from '../core/state-bounds';
import { type StateWrite, StateWriteTracker } from '../core/state-write';
import { storeKeys } from '../core/store-keys';
import { oneLine } from '../core/text';
import { jobActivities, storeActivities } from './activities-proxy';
import { featuresOfThisRun } from './features';
import type {
  GoalRun,
  OpenAlso,
  RunStore,
  StoreEvent,
  StoreEvents,
  StoreWaitOptions,
  ToolAnswer,
} from './goal-run-port';
import type { GoalWorkflowInput } from './goal-workflow-input';
import { PATCH, type WorkflowFeatures } from './patches';
import { StoreWait } from './store-wait';
import { TimeLimit } from './time-limit';
import { createPublisher, startAttributes } from './visibility';

/** What a run is composed with (goal-workflow.ts): what follows a checkpoint (the hooks). */
export interface GoalRunParts {
  /** After every checkpoint: the notify hooks, and the MCP servers stopped at the goal's end (goal-hooks.ts). */
  afterCheckpoint(run: GoalRun, eventKind: string | undefined): Promise<void>;
}

/** A goal's execution over Temporal: its session, its store writes, its time limit. */
export class TemporalGoalRun implements GoalRun {
  readonly session: GoalSession;
  readonly workflowId = workflowInfo().workflowId;
  readonly timeLimit = new TimeLimit();
  /** Tool calls of the running step that have no stored result yet. */
  unanswered: ToolCallRef[] = [];
  heldAnswer: ToolAnswer | null = null;
  /** Sequence numbers of delivered steering messages, by id, for the updates waiting on them. */
  readonly deliveredSteering = new Map<string, number>();
  /** Why a steering message was never delivered (the goal ended first), by id, for the same updates. */
  readonly undeliveredSteering = new Map<string, string>();
  private readonly writes = new StateWriteTracker();
  private readonly publisher: () => void;
  /** Whether the session row and the first message exist (a goal cancelled before its start has neither). */
  opened: boolean;
  /** Why this execution takes no more workspace snapshots (a folder that is not a git repository), once known. */
  noSnapshots: string | null = null;
  /** Whether the tool host has said it holds nothing of this goal, with no other call made there. */
  toolHostClean = false;
  /** The patched behaviours this run takes (false for the changes made after the build that started it). */
  readonly features: WorkflowFeatures = featuresOfThisRun();
  /**
   * Awaits a long activity while the message path keeps carrying out requests (the command queue sets
   * it; before the command queue, handlers acted on their own and this only awaits).
   */
  serveWork: <T>(work: Promise<T>) => Promise<T> = (work) => work;
  /** Called first when the goal ends; the command queue answers what waits. */
  onEnding: (status: GoalStatus) => Promise<void> = async (status) => this.dropUndeliveredSteering(status);

  private readonly storeWait = new StoreWait(this);
  /** The store calls of this run: each waits out a store outage (store-wait.ts, patch store-outage-wait). */
  private readonly stores = this.storeWait.calls(storeActivities);

  readonly store: RunStore = {
    reserveDailyBudget: (input) => this.stores.reserveDailyBudget(input),
    // A reservation is settled even when the step that held it was cancelled.
    settleDailyBudget: (input) =>
      CancellationScope.nonCancellable(() => this.stores.settleDailyBudget(input)),
    // What a model call that ended without an answer was billed (paid-calls.ts), read even on cancel.
    billedAttempts: (input) => CancellationScope.nonCancellable(() => this.stores.billedAttempts(input)),
  };

  constructor(
    private readonly input: GoalWorkflowInput,
    private readonly parts: GoalRunParts,
  ) {
    const state = input.state
      ? withLaterFields(input.state)
      : { ...initialGoalState(input.goal), ...(input.tasks ? { tasks: input.tasks } : {}) };
    this.session = new GoalSession(state, () => Date.now());
    this.opened = Boolean(input.state);
    this.publisher = createPublisher(
      () => ({ state: this.state, snapshot: this.session.snapshot(this.workflowId) }),
      this.features[PATCH.startAttributesPublished] ? startAttributes() : undefined,
    );
    this.timeLimit.cutStaysCut = this.features[PATCH.commandQueue];
  }

  get state(): GoalState {
    return this.session.state;
  }

  set state(next: GoalState) {
    this.session.state = next;
  }

  /** This execution's number: 1 for the first run, one more for each resume. */
  get execution(): number {
    return this.state.executions;
  }

  /** Publishes the state to the Web UI (search attributes, current details). */
  publish(): void {
    this.publisher();
  }

  /** Runs a call until it gets through a store outage (store-wait.ts). */
  untilStored<T>(what: string, call: () => Promise<T>, options?: StoreWaitOptions): Promise<T> {
    return this.storeWait.untilStored(what, call, options);
  }

  // --- Starting (goal-start.ts) --------------------------------------------------------------

  /** Opens a new session: its row, the first message, the initial state (and what `also` asks). */
  async open(also: OpenAlso = {}): Promise<OpenSessionResult> {
    const state = this.writes.writeFor(this.session.savedState(), true);
    const opened = await this.stores.openSession({
      goal: this.input.goal,
      workflowId: this.workflowId,
      state,
      // Patched runs take the first message's snapshot from the stored context: the model worker never
      // runs anything in the workspace, even when the gathering failed.
      workspaceContext: this.features[PATCH.workspaceContext] ? { execution: this.execution } : undefined,
      ...also,
    });
    // Committed with the first message: the first step's write then carries only what changed since,
    // not the whole state (with the objective) a second time.
    this.stateWritten(state);
    this.opened = true;
    this.state = {
      ...this.state,
      ledger: appendLedger(this.state.ledger, opened.first),
      compaction:
        this.state.compaction ?? initialCompactionState(opened.first.seq, this.state.goal.autoCompact),
    };
    return opened;
  }

  // --- Store writes --------------------------------------------------------------------------

  /** The state write for the store: only what changed, or everything for a checkpoint. */
  stateWrite(full = false, as: Partial<GoalState> = {}): StateWrite {
    const saved = { ...this.session.savedState(), keptProgress: this.session.keptProgress, ...as };
    const write = this.writes.writeFor(saved, full);
    // The transcript seq the state accounts for: a resume recounts the steps stored after it.
    write.set.checkpointSeq = lastSeqOf(this.state.ledger);
    return full ? { ...write, status: this.state.status, reason: this.state.reason } : write;
  }

  /** Records that a state write reached the store. */
  stateWritten(write: StateWrite): void {
    this.writes.committed(write);
  }

  /** Stores a message the workflow writes itself, with the state that accounts for it. */
  async appendMessage(
    key: string,
    message: StoredMessage,
    extra: { meta?: MessageMeta; event?: StoreEvents } = {},
    full = false,
  ): Promise<LedgerEntry> {
    const state = this.stateWrite(full);
    const result = await this.stores.appendMessage({
      sessionId: this.state.goal.sessionId,
      key,
      message,
      state,
      ...extra,
    });
    this.stateWritten(state);
    const entry = result.entry ?? ledgerEntryFor(result.seq, key, message);
    this.state = { ...this.state, ledger: appendLedger(this.state.ledger, entry) };
    return entry;
  }

  /** Saves the state (a checkpoint when `full`), with an optional event and tool answer in the same transaction. */
  async saveState(full: boolean, event?: StoreEvent, answer?: ToolAnswer): Promise<void> {
    if (answer) {
      const events = [...[answer.events].flat(), ...(event ? [event] : [])];
      await this.appendMessage(answer.key, answer.message, { event: events }, full);
    } else {
      const state = this.stateWrite(full);
      await this.stores.saveState({ sessionId: this.state.goal.sessionId, state, event });
      this.stateWritten(state);
    }
    if (full) await this.parts.afterCheckpoint(this, event?.kind);
  }

  /** Answers every tool call of the interrupted step, so no call is left without its result. */
  async answerUnanswered(why: string): Promise<void> {
    const held = this.heldAnswer;
    if (held) {
      await this.appendMessage(held.key, held.message, { event: held.events });
      this.heldAnswer = null;
    }
    for (const call of this.unanswered) {
      await this.appendMessage(storeKeys.toolResult(call.toolCallId), {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            output: { type: 'error-text', value: `[not run to completion: ${why}]` },
          },
        ],
      });
    }
    this.unanswered = [];
  }

  // --- Steering ------------------------------------------------------------------------------

  /** Stores a steering message for the model (spec F-CMDS) and marks it delivered. */
  async deliverSteering(request: { id: string; text: string; from: string }): Promise<number> {
    const key = storeKeys.steering(request.id);
    const text = `[steering from ${request.from}] ${request.text}`;
    const entry = await this.appendMessage(key, userText(text), {
      meta: { from: request.from },
      event: { kind: 'steering', data: { id: request.id, from: request.from, text: request.text }, key },
    });
    this.session.steeringDelivered(request.id);
    this.deliveredSteering.set(request.id, entry.seq);
    this.session.note(`steering from ${request.from}: ${oneLine(request.text)}`);
    return entry.seq;
  }

  /**
   * Answers the steering still queued when the goal ends (sent during its last step): the sender
   * learns it was not delivered, instead of an update that fails with the workflow.
   */
  private dropUndeliveredSteering(status: GoalStatus): void {
    for (const request of this.session.dropPendingSteering()) {
      this.undeliveredSteering.set(request.id, undeliveredSteeringText(status, this.state.goal.sessionId));
      this.session.note(`steering from ${request.from} not delivered: the goal ended (${status})`);
    }
  }

  /** Delivers every queued steering message, in the order they arrived. */
  async deliverPendingSteering(): Promise<void> {
    for (const request of [...this.session.pendingSteering]) await this.deliverSteering(request);
  }

  // --- The foreground host (host-placement.ts) -------------------------------------------------

  /** A foreground process takes the goal's steps (its queue), or gives them back (null). */
  setHost(queue: string | null, from: string): string {
    this.state = { ...this.state, goal: { ...this.state.goal, hostQueue: queue ?? undefined } };
    const text = queue
      ? `steps now run in the foreground process of ${from} (queue ${queue})`
      : `the foreground process of ${from} gave the goal back: its steps run on the store's workers`;
    this.session.note(text);
    return text;
  }

  /** The host stopped taking calls: the goal goes on on the store's workers. */
  releaseHost(host: string, why: string): void {
    if (this.state.goal.hostQueue !== host) return;
    this.state = { ...this.state, goal: { ...this.state.goal, hostQueue: undefined } };
    this.session.note(`${why}; its steps go on on the store's workers`);
  }

  // --- Jobs ----------------------------------------------------------------------------------

  /** Kills every running background job (the goal ended or waits at a limit); unreachable hosts make them lost. */
  async killJobs(): Promise<void> {
    for (const [processQueue, ids] of runningJobsByProcess(this.state.jobs)) {
      try {
        await jobActivities('kill background jobs', processQueue).killSessionJobs({
          sessionId: this.state.goal.sessionId,
        });
        this.session.jobsEnded(ids, 'killed');
      } catch (err) {
        // A cancelled goal is not an unreachable tool host: the cancellation goes on (command queue on).
        if (isCancellation(err) && this.features[PATCH.commandQueue]) throw err;
        log.warn('could not reach the tool host of background jobs', { processQueue, error: String(err) });
        this.session.jobsEnded(ids, 'lost');
      }
    }
  }

  // --- Ending (goal-ending.ts) ----------------------------------------------------------------

  /** The input of the next run after continue-as-new. */
  continueAsNewInput(): GoalWorkflowInput {
    return continueAsNewPayload(this.session.savedState());
  }
}
