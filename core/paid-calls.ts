/**
 * Paid calls that produced no answer the goal used (issue 24 item 4). A provider bills a request
 * once it has accepted it and started answering, whatever happens next: a stream that stalls, a
 * server error mid-answer, an answer lost because the store write after it failed. Each such attempt
 * is counted like an answered call: at the usage the provider reported when there is one, else at
 * the worst case the budget gate reserved for the call (core/spend-cap.ts), because that is the most
 * the provider can have charged. Pure, so the activities, the workflow and the tests share it.
 */
import { addBilledToBreakdown, costOf, type UsageBreakdown } from './cost';
import { GENERIC_MAX_OUTPUT_TOKENS, type ModelCard, type ModelPrices } from './model-card';
import { addBilledUsage, type RequestUsage, type UsageTotals } from './usage';

/** How the calls of one activity are priced, fixed by the workflow before it schedules them. */
export interface CallPricing {
  /** The card's prices (all zero for a model without a card: its cost is unknown, never guessed). */
  prices: ModelPrices;
  /** The call's worst case as usage: what an attempt that reported no usage is counted at. */
  worstCase: RequestUsage;
}

/** One billed attempt as the store's ledger holds it (store/paid-calls.ts). */
export interface BilledAttemptRecord {
  usage: RequestUsage;
  costUsd: number;
  /** Counted at the worst case: the provider reported no usage for it. */
  atReservation: boolean;
}

/** The attempts of a call that were billed without an answer the goal used, added up. */
export interface BilledAttempts {
  attempts: number;
  /** How many of them reported no usage and count at the call's worst case. */
  atReservation: number;
  usage: RequestUsage;
  costUsd: number;
}

const NO_PRICES: ModelPrices = {
  inputPerMTok: 0,
  outputPerMTok: 0,
  cacheReadPerMTok: 0,
  cacheWritePerMTok: 0,
};

const ZERO_USAGE: RequestUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

/**
 * The worst case of one call as usage: the estimated input and the card's whole output ceiling. Its
 * cost at the card's prices is reservationFor's (core/spend-cap.ts), so a billed attempt without
 * usage costs exactly what the gate reserved for it.
 */
export function worstCaseUsage(card: ModelCard | null, estimatedInputTokens: number): RequestUsage {
  return {
    inputTokens: Math.max(0, Math.ceil(estimatedInputTokens)),
    outputTokens: card?.maxOutputTokens ?? GENERIC_MAX_OUTPUT_TOKENS,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
}

/** The pricing of a call of `card` whose input is estimated at `estimatedInputTokens`. */
export function callPricing(card: ModelCard | null, estimatedInputTokens: number): CallPricing {
  return { prices: card?.prices ?? NO_PRICES, worstCase: worstCaseUsage(card, estimatedInputTokens) };
}

/**
 * What one billed attempt counts as: its reported usage at the card's prices, or the worst case
 * when it reported none. Without a pricing (a caller that gave none) it counts its usage at no cost.
 */
export function billedAttempt(
  usage: RequestUsage | null,
  pricing: CallPricing | undefined,
): BilledAttemptRecord {
  const counted = usage ?? pricing?.worstCase ?? ZERO_USAGE;
  return {
    usage: counted,
    costUsd: costOf(counted, { prices: pricing?.prices ?? NO_PRICES }),
    atReservation: usage === null,
  };
}

/** Adds billed attempts up; null when there are none. */
export function sumBilled(records: readonly BilledAttemptRecord[]): BilledAttempts | null {
  if (records.length === 0) return null;
  return records.reduce<BilledAttempts>(
    (sum, record) => ({
      attempts: sum.attempts + 1,
      atReservation: sum.atReservation + (record.atReservation ? 1 : 0),
      usage: addUsage(sum.usage, record.usage),
      costUsd: sum.costUsd + record.costUsd,
    }),
    { attempts: 0, atReservation: 0, usage: ZERO_USAGE, costUsd: 0 },
  );
}

/** Two billed sums as one (either may be absent). */
export function mergeBilled(
  a: BilledAttempts | null | undefined,
  b: BilledAttempts | null | undefined,
): BilledAttempts | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return {
    attempts: a.attempts + b.attempts,
    atReservation: a.atReservation + b.atReservation,
    usage: addUsage(a.usage, b.usage),
    costUsd: a.costUsd + b.costUsd,
  };
}

function addUsage(a: RequestUsage, b: RequestUsage): RequestUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  };
}

/** What of a goal's state the billed attempts are counted in: its breakdown (cost) and totals (tokens). */
export interface SpendCounters {
  breakdown?: UsageBreakdown;
  usage: UsageTotals;
}

/**
 * Counts a call's billed attempts in a goal's spend, so the money and token caps, the step's daily
 * settlement and `stats` see them. `card` is the one the call was priced on (null: no card known).
 */
export function withBilledAttempts<S extends SpendCounters>(
  state: S,
  model: string,
  billed: BilledAttempts | null | undefined,
  card: ModelCard | null,
): S {
  if (!billed || billed.attempts === 0) return state;
  return {
    ...state,
    breakdown: addBilledToBreakdown(state.breakdown ?? {}, model, billed, card),
    usage: addBilledUsage(state.usage, billed.usage, billed.attempts),
  };
}

/** The ledger keys of paid calls live with every other store key (core/store-keys.ts). */
export { paidCallKeys } from './store-keys';

/** An activity's identity in its workflow run: what the keys of its paid calls start from. */
export function activityInstance(runId: string, activityId: string): string {
  return `${runId}/${activityId}`;
}
