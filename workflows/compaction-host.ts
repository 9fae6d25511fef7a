/**
 * The workflow state a compaction reads and writes: the
 * compaction state, the pressure estimate, the notices and the summarizer's usage.
 */
import { pressureOf } from '../core/compaction/compaction-decisions';
import { type CompactionState, initialCompactionState } from '../core/compaction/state';
import { addToBreakdown } from '../core/cost';
import { type GoalState, noteAction } from '../core/goal';
import { lastSeqOf } from '../core/ledger';
import { type StoredMessage, userText } from '../core/messages';
import type { ModelCard } from '../core/model-card';
import type { BilledAttempts, CallPricing } from '../core/paid-calls';
import { mergeChanges } from '../core/state-merge';
import type { RequestUsage } from '../core/usage';
import type { Placement } from './host-placement';

/** The workflow state the compaction works on, and how it writes to the transcript. */
export interface CompactionHost {
  /** Summaries keep only the latest three steering messages (a run started before every one was kept). */
  readonly latestSteeringOnly: boolean;
  /**
   * Whether what a compaction writes after its summarizer call is merged onto the state as it is then
   * (false for runs started before the command queue, which overwrote it).
   */
  readonly mergesConcurrentChanges: boolean;
  get(): GoalState;
  set(state: GoalState): void;
  /** Awaits an activity while commands that need no step boundary keep being carried out. */
  serve<T>(work: Promise<T>): Promise<T>;
  /** Makes a store call until it gets through a store outage (store-wait.ts; absent: the call is made once). */
  untilStored?<T>(what: string, call: () => Promise<T>): Promise<T>;
  /**
   * Places a call on the goal's foreground host, if it has one (host-placement.ts); `lost` hears of an
   * attempt the host started and lost, before the call is made again.
   */
  onHost<T>(call: (placement: Placement) => Promise<T>, lost?: (err: unknown) => Promise<void>): Promise<T>;
  /**
   * Stores the n-th notice of the session (the host makes its key: storeKeys.notice); with `done`, the
   * notice reports a compaction (the event stream shows it as one).
   */
  appendNotice(n: number, message: StoredMessage, done?: CompactionDone): Promise<void>;
  /**
   * Whether the goal's money and token caps leave room for a summarizer call of this input, priced
   * on `card` (the summarizer's; absent: the model's) (absent: no caps).
   */
  budgetAllows?(inputTokens: number, card?: ModelCard | null): boolean;
  /**
   * Holds a summarizer call's worst case against the store-wide daily budget until `release`; refused
   * when today's cap has no room for it (absent: runs from before summaries were reserved).
   */
  holdDaily?(model: string, reservationUsd: number): Promise<DailyHold>;
  /**
   * What a summarize activity that ended without a summary was billed, read from the ledger (absent:
   * runs from before billed calls were counted, PATCH.paidCalls).
   */
  billedOnFailure?(err: unknown, model: string, pricing: CallPricing): Promise<BilledAttempts | null>;
  /**
   * Where a summary goes when the summarizer model `model` failed with `err`: the goal's model, when
   * the failure is a reason to fail over (absent: runs before PATCH.failover; null: nowhere).
   */
  summarizerFallback?(model: string, err: unknown): SummarizerFallback | null;
}

/** Another model for a summary whose summarizer is down, with its card (prices and reservation). */
export interface SummarizerFallback {
  model: string;
  baseUrl?: string;
  card: ModelCard | null;
}

/** A summarizer call's hold on the daily budget. */
export interface DailyHold {
  refused: boolean;
  /** Gives the hold back (the call recorded its own cost); runs even when the goal is being cancelled. */
  release(): Promise<void>;
}

/** What a finished compaction reports to the event stream. */
export interface CompactionDone {
  beforeTokens: number;
  afterTokens: number;
  kind: 'auto' | 'manual' | 'forced' | 'recovery';
}

/** The kind of a compaction request, as the event stream names it. */
export function compactionKind(request: CompactionRequest): CompactionDone['kind'] {
  if (request.recovery) return 'recovery';
  if (request.forced) return 'forced';
  return request.manual ? 'manual' : 'auto';
}

/** How a compaction ended. */
export type CompactionStage = 'none' | 'pruned' | 'summarized' | 'discarded' | 'failed' | 'wait';

/** What a compaction did, as the `compact` update returns it. */
export interface CompactionResult {
  stage: CompactionStage;
  beforeTokens: number;
  afterTokens: number;
  note: string | null;
}

/** Why a compaction runs. */
export interface CompactionRequest {
  /** A user's `goalrun compact`: always summarizes (stage 2) when there is a span. */
  manual?: boolean;
  /** A last resort (over the hard limit, or a provider overflow): keeps two exchanges, not three. */
  forced?: boolean;
  /** Recovering from a provider overflow: a failed summarizer falls back to an extracted summary. */
  recovery?: boolean;
  topic?: string;
}

/** The compaction state of a goal, created on first use (older histories have none). */
export function compactionOf(state: GoalState): CompactionState {
  if (state.compaction) return state.compaction;
  const firstSeq = state.ledger[0]?.seq ?? 0;
  return initialCompactionState(firstSeq, state.goal.autoCompact);
}

/** Context pressure of the coming request: the last reported input plus what was appended since. */
export function currentPressure(state: GoalState): number {
  return pressureOf(compactionOf(state), state.ledger);
}

/**
 * Stores new compaction state. The pressure restarts from the compacted estimate and context
 * occupancy drops with it (spec: after compaction the gauge is reset).
 */
export function setCompaction(host: CompactionHost, compaction: CompactionState, pressure: number): void {
  const state = host.get();
  host.set({
    ...state,
    usage: { ...state.usage, contextTokens: pressure },
    compaction: { ...compaction, lastInputTokens: pressure, lastCoveredSeq: lastSeqOf(state.ledger) },
  });
}

/** Writes a one-line notice to the transcript and the recent-actions log. */
export async function notify(host: CompactionHost, note: string, done?: CompactionDone): Promise<void> {
  const state = host.get();
  const compaction = compactionOf(state);
  host.set(noteAction({ ...state, compaction: { ...compaction, notices: compaction.notices + 1 } }, note));
  await host.appendNotice(compaction.notices + 1, userText(`[goalrun] ${note}`), done);
  // The notice itself is part of the next request; it must not look like unreported pressure.
  const after = host.get();
  const current = compactionOf(after);
  host.set({ ...after, compaction: { ...current, lastCoveredSeq: lastSeqOf(after.ledger) } });
}

/**
 * Counts a summarizer request in the cost of the goal that triggered it, marked as such; `billed`
 * when it is requests the ledger priced already (billed without a summary).
 */
export function withSummarizerUsage(
  state: GoalState,
  model: string,
  usage: RequestUsage | null,
  card: CompactionState['card'],
  billed?: { attempts: number; costUsd: number },
): GoalState {
  if (!usage) return state;
  const requests = billed?.attempts ?? 1;
  return {
    ...state,
    breakdown: card
      ? addToBreakdown(state.breakdown ?? {}, model, usage, {
          summarizer: true,
          card,
          ...(billed ? { costUsd: billed.costUsd, requests } : {}),
        })
      : state.breakdown,
    usage: {
      ...state.usage,
      totalTokens: state.usage.totalTokens + usage.inputTokens + usage.outputTokens,
      inputTokens: state.usage.inputTokens + usage.inputTokens,
      outputTokens: state.usage.outputTokens + usage.outputTokens,
      requests: state.usage.requests + requests,
    },
  };
}

/** The compaction counters after a summarizer request that produced no usable summary. */
export function countSummarizerRequest(
  compaction: CompactionState,
  usage: RequestUsage | null,
): CompactionState {
  return {
    ...compaction,
    summarizerRequests: compaction.summarizerRequests + 1,
    summarizerTokens: compaction.summarizerTokens + (usage ? usage.inputTokens + usage.outputTokens : 0),
  };
}

/**
 * The host as seen after an await: every write applies only what the compaction changed since
 * `start` (its compaction state when it began), so a command carried out meanwhile (a /auto-compact,
 * a /model that reset the budget) keeps its effect.
 */
export function mergingHost(host: CompactionHost, start: GoalState): CompactionHost {
  if (!host.mergesConcurrentChanges) return host;
  const base = compactionOf(start);
  return {
    ...host,
    latestSteeringOnly: host.latestSteeringOnly,
    mergesConcurrentChanges: true,
    get: () => host.get(),
    set: (next) => {
      const current = host.get();
      const ours = compactionOf(next);
      host.set({ ...next, compaction: mergeChanges(base, ours, compactionOf(current)) });
    },
  };
}
