/**
 * The compaction part of a goal's durable state: the context plan, the failure budget, the
 * model's budget and the figures the pressure estimate needs (spec S-COMPACT, S-AUTO, S-BUDGET).
 */
import type { ContextBudget } from '../budget';
import { type ContextPlan, initialContextPlan } from '../context-plan';
import type { ModelCard } from '../model-card';
import { type AutoCompactSettings, type AutoCompactState, initialAutoCompactState } from './failure-budget';

/** Compaction control state, kept in workflow state and carried over continue-as-new. */
export interface CompactionState {
  plan: ContextPlan;
  autoCompact: AutoCompactState;
  /** The model's budget; null until resolved at the start of an execution. */
  budget: ContextBudget | null;
  /** The model's card (prices for cost accounting); null until resolved. */
  card: ModelCard | null;
  /**
   * The card of the goal's summarizer_model when it is another model: summaries are priced and
   * reserved on it. Absent: the summarizer is the goal's model (or a state from before it was kept).
   */
  summarizerCard?: ModelCard;
  /** Input tokens the provider reported for the last request (or the estimate after a compaction). */
  lastInputTokens: number;
  /** The request behind lastInputTokens covered the transcript up to this seq. */
  lastCoveredSeq: number;
  /** System prompt and tool schemas, as estimated by the last model step. */
  fixedTokens: number;
  /** Summaries made so far: the next one is number compactions + 1. */
  compactions: number;
  /** Transcript notices written so far (their keys are numbered). */
  notices: number;
  summarizerRequests: number;
  summarizerTokens: number;
}

/** The compaction state of a goal whose first message has this sequence number. */
export function initialCompactionState(
  firstSeq: number,
  settings: AutoCompactSettings = {},
): CompactionState {
  return {
    plan: initialContextPlan(firstSeq),
    autoCompact: initialAutoCompactState(settings),
    budget: null,
    card: null,
    lastInputTokens: 0,
    lastCoveredSeq: 0,
    fixedTokens: 0,
    compactions: 0,
    notices: 0,
    summarizerRequests: 0,
    summarizerTokens: 0,
  };
}

/** The card a summarizer call is priced and reserved on: the summarizer's own, else the model's. */
export function summarizerCardOf(compaction: CompactionState): ModelCard | null {
  return compaction.summarizerCard ?? compaction.card;
}
