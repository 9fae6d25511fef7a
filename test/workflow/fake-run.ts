/**
 * A goal run without Temporal, for unit tests of the gates: it implements the GoalRun port
 * (workflows/goal-run-port.ts) over a real GoalSession and a clock the test moves, records every state
 * save, publish, time-limit change and killed job, and answers the store calls of the gates from a
 * script. The waits a gate makes (hooks.waitUntil, control.waitInStep) go through `waitUntil`: the
 * test says what happens during each wait (a raise, a /clear, nothing), and the clock moves by its
 * length when it runs out. Workflow time is Date.now(), faked: call useWorkflowClock() first.
 */
import { vi } from 'vitest';
import type { OpenSessionResult, ToolCallRef } from '../../activities/types';
import { initialCompactionState } from '../../core/compaction/state';
import {
  DEFAULT_LIMITS,
  type GoalDefinition,
  type GoalState,
  type GoalStatus,
  initialGoalState,
} from '../../core/goal';
import { GoalSession } from '../../core/goal-session';
import type { LedgerEntry } from '../../core/ledger';
import type { ModelCard } from '../../core/model-card';
import type { StateWrite } from '../../core/state-write';
import type { GoalRun, RunStore, StoreEvent, ToolAnswer } from '../../workflows/goal-run-port';
import { PATCHES, type WorkflowFeatures } from '../../workflows/patches';

/** A priced card: $1 per million input tokens, $4 per million output, 1,000 output tokens at most. */
export const PRICED_CARD: ModelCard = {
  provider: 'test',
  model: 'priced',
  advertisedContextTokens: 100_000,
  maxOutputTokens: 1_000,
  prices: { inputPerMTok: 1, outputPerMTok: 4, cacheReadPerMTok: 0, cacheWritePerMTok: 0 },
};

/** A state save the run made: full (checkpoint) or not, its event, the status at that moment. */
export interface Save {
  full: boolean;
  event?: StoreEvent;
  /** The key of the tool answer stored in the same write, if any. */
  answerKey?: string;
  status: GoalStatus;
  reason: string | null;
}

/** What happens during one wait: runs at its start; returns nothing (the wait ends if ready, else times out). */
export type DuringWait = (run: FakeRun) => void;

/** Fakes Date (workflow time, which the gates read) at a fixed start; call in beforeEach. */
export function useWorkflowClock(startMs = Date.UTC(2026, 5, 1, 12)): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(startMs);
}

/** Moves workflow time on. */
export function advanceClock(ms: number): void {
  vi.setSystemTime(Date.now() + ms);
}

/** Options of a fake run. */
export interface FakeRunOptions {
  goal?: Partial<GoalDefinition>;
  card?: ModelCard | null;
  features?: Partial<WorkflowFeatures>;
}

export class FakeRun implements GoalRun {
  readonly session: GoalSession;
  readonly workflowId = 'goalrun-fake';
  readonly features: WorkflowFeatures;
  readonly saves: Save[] = [];
  published = 0;
  killedJobs = 0;
  readonly timeLimitLog: string[] = [];
  readonly timeLimit = {
    arm: (remainingMs: number) => {
      this.timeLimitLog.push(`arm ${remainingMs}`);
    },
    disarm: () => {
      this.timeLimitLog.push('disarm');
    },
  };
  /** The answers of the store calls, in order; a function answers from the input. */
  readonly storeAnswers: Array<unknown | ((input: unknown) => unknown)> = [];
  readonly storeCalls: Array<{ name: string; input: unknown }> = [];
  readonly store: RunStore;
  unanswered: ToolCallRef[] = [];
  heldAnswer: ToolAnswer | null = null;
  readonly deliveredSteering = new Map<string, number>();
  readonly undeliveredSteering = new Map<string, string>();
  opened = true;
  noSnapshots: string | null = null;
  toolHostClean = false;
  serveWork = <T>(work: Promise<T>) => work;
  /** No store outage here: the call runs once. */
  untilStored = <T>(_what: string, call: () => Promise<T>) => call();
  onEnding = async (_status: GoalStatus) => undefined;
  /** What happens in each coming wait, oldest first; an empty list: nothing happens, the wait times out. */
  readonly during: DuringWait[] = [];
  /** The timeout of every wait the gate made (ms), in order. */
  readonly waits: number[] = [];

  constructor(options: FakeRunOptions = {}) {
    const goal: GoalDefinition = {
      sessionId: 'sess-fake',
      objective: 'test the gates',
      workspace: '/tmp/fake-workspace',
      model: 'test:priced',
      limits: { ...DEFAULT_LIMITS },
      ...options.goal,
    };
    const state = initialGoalState(goal);
    const compaction = initialCompactionState(1, undefined);
    this.session = new GoalSession(
      {
        ...state,
        compaction: { ...compaction, card: options.card === undefined ? PRICED_CARD : options.card },
      },
      () => Date.now(),
    );
    const all = Object.fromEntries(PATCHES.map((patch) => [patch.id, true])) as WorkflowFeatures;
    this.features = { ...all, ...options.features };
    const answer = (name: string) => async (input: unknown) => {
      this.storeCalls.push({ name, input });
      const next = this.storeAnswers.shift();
      if (next === undefined) throw new Error(`no scripted answer for the store call ${name}`);
      return typeof next === 'function' ? (next as (input: unknown) => unknown)(input) : next;
    };
    this.store = {
      reserveDailyBudget: answer('reserveDailyBudget') as RunStore['reserveDailyBudget'],
      billedAttempts: answer('billedAttempts') as RunStore['billedAttempts'],
      settleDailyBudget: answer('settleDailyBudget') as RunStore['settleDailyBudget'],
    };
  }

  get state(): GoalState {
    return this.session.state;
  }

  set state(next: GoalState) {
    this.session.state = next;
  }

  get execution(): number {
    return this.state.executions;
  }

  /** The wait the gates make (the command queue's waitUntil / waitInStep), driven by `during`. */
  async waitUntil(ready: () => boolean, timeoutMs: number): Promise<boolean> {
    this.waits.push(timeoutMs);
    this.during.shift()?.(this);
    if (ready()) return true;
    advanceClock(timeoutMs);
    return ready();
  }

  /** The hooks a boundary gate takes (limit, budget, daily budget). */
  hooks(clearRequested = () => false) {
    return { waitUntil: (ready: () => boolean, ms: number) => this.waitUntil(ready, ms), clearRequested };
  }

  /** The step control a step gate takes (quota). */
  stepControl() {
    return {
      serve: <T>(work: Promise<T>) => work,
      waitInStep: (ready: () => boolean, ms: number) => this.waitUntil(ready, ms),
      approvals: { answer: null },
    };
  }

  /** The `at` of each budget event saved (cap, raised), in order. */
  budgetAts(): string[] {
    return this.saves.flatMap((save) =>
      save.event?.kind === 'budget' ? [(save.event.data as { at: string }).at] : [],
    );
  }

  /** The kinds of the events saved, in order. */
  eventKinds(): string[] {
    return this.saves.flatMap((save) => (save.event ? [save.event.kind] : []));
  }

  publish(): void {
    this.published += 1;
  }

  async open(): Promise<OpenSessionResult> {
    this.opened = true;
    return { first: { seq: 1, role: 'user', tokens: 1, kind: 'first' } as LedgerEntry };
  }

  stateWrite(full = false): StateWrite {
    return { set: {}, full } as unknown as StateWrite;
  }

  stateWritten(_write: StateWrite): void {}

  async appendMessage(key: string): Promise<LedgerEntry> {
    throw new Error(`the gate under test stored a message (${key}); give FakeRun a transcript first`);
  }

  async saveState(full: boolean, event?: StoreEvent, answer?: ToolAnswer): Promise<void> {
    this.saves.push({
      full,
      event,
      status: this.state.status,
      reason: this.state.reason,
      ...(answer ? { answerKey: answer.key } : {}),
    });
  }

  async answerUnanswered(_why: string): Promise<void> {
    this.unanswered = [];
  }

  async deliverSteering(): Promise<number> {
    throw new Error('no steering in gate tests');
  }

  async deliverPendingSteering(): Promise<void> {}

  setHost(): string {
    return '';
  }

  releaseHost(): void {}

  async killJobs(): Promise<void> {
    this.killedJobs += 1;
  }
}
