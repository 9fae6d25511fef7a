/**
 * A goal's money and token cap (issue 18): before each model call (the summarizer's too) the goal
 * reserves the call's worst case, and starts it only if what was spent plus that reservation stays
 * within the cap; afterwards the provider's reported usage settles it. Since every call that starts
 * had spent ≤ cap before it, the cap is overshot by at most one call, when a provider reports more
 * than the reservation assumed. Pure, so the workflow and the property tests share it.
 */
import { breakdownTotal, TOKENS_PER_PRICE_UNIT, type UsageBreakdown } from './cost';
import { GENERIC_MAX_OUTPUT_TOKENS, isGenericCard, type ModelCard } from './model-card';
import type { UsageTotals } from './usage';

/**
 * Float sums of per-call costs drift by far less than this: a reservation that lands exactly on the
 * cap must not be refused for a rounding error of 1e-17 dollars.
 */
const USD_TOLERANCE = 1e-9;

/** The caps a goal may have; absent means no cap. */
export interface SpendCaps {
  maxCostUsd?: number;
  maxTokens?: number;
}

/** Money and tokens: spent so far, or reserved for a call. */
export interface SpendAmount {
  costUsd: number;
  tokens: number;
}

/** Which cap stops the goal. */
export type CapKind = 'cost' | 'tokens';

/** The goal may not start its next model call. */
export interface CapStop {
  cap: CapKind;
  /** One line for status and the transcript: the figures and how to raise the cap. */
  reason: string;
  spent: SpendAmount;
  reservation: SpendAmount;
}

/** What `status`, `/limits`, the Web UI and the `budget` event show. */
export interface BudgetView {
  spentUsd: number;
  reservedUsd: number;
  capUsd: number | null;
  spentTokens: number;
  reservedTokens: number;
  capTokens: number | null;
}

/** Whether a goal has a cap at all (without one, nothing is reserved or checked). */
export function hasCap(caps: SpendCaps): boolean {
  return caps.maxCostUsd !== undefined || caps.maxTokens !== undefined;
}

/**
 * The worst case of one call: the estimated input at the input price plus the card's whole output
 * ceiling at the output price. A cached prefix would cost less, so this never underestimates for a
 * correct input estimate. Without a card the output ceiling is the generic card's and the cost 0.
 */
export function reservationFor(card: ModelCard | null, estimatedInputTokens: number): SpendAmount {
  const input = Math.max(0, Math.ceil(estimatedInputTokens));
  const maxOutput = card?.maxOutputTokens ?? GENERIC_MAX_OUTPUT_TOKENS;
  const costUsd = card
    ? (input * card.prices.inputPerMTok + maxOutput * card.prices.outputPerMTok) / TOKENS_PER_PRICE_UNIT
    : 0;
  return { costUsd, tokens: input + maxOutput };
}

/**
 * What a goal has spent: every request's cost and tokens, summarizer requests included, and what its
 * sub-agents spent (charged to it when each ended; issue 27 §2).
 */
export function spentOf(state: {
  breakdown?: UsageBreakdown;
  usage: UsageTotals;
  agents?: ReadonlyArray<{ costUsd: number; tokens: number }>;
}): SpendAmount {
  let costUsd = breakdownTotal(state.breakdown ?? {}).costUsd;
  let tokens = state.usage.totalTokens;
  for (const agent of state.agents ?? []) {
    costUsd += agent.costUsd;
    tokens += agent.tokens;
  }
  return { costUsd, tokens };
}

/** Null when the call may start (spent + reservation within every cap), else which cap stops it. */
export function capStop(spent: SpendAmount, reservation: SpendAmount, caps: SpendCaps): CapStop | null {
  if (
    caps.maxCostUsd !== undefined &&
    spent.costUsd + reservation.costUsd > caps.maxCostUsd + USD_TOLERANCE
  ) {
    return {
      cap: 'cost',
      spent,
      reservation,
      reason:
        `budget reached: ${usd(spent.costUsd)} spent of ${usd(caps.maxCostUsd)}, ` +
        `and the next model call may cost up to ${usd(reservation.costUsd)}`,
    };
  }
  if (caps.maxTokens !== undefined && spent.tokens + reservation.tokens > caps.maxTokens) {
    return {
      cap: 'tokens',
      spent,
      reservation,
      reason:
        `token budget reached: ${spent.tokens} tokens spent of ${caps.maxTokens}, ` +
        `and the next model call may take up to ${reservation.tokens}`,
    };
  }
  return null;
}

/** Whether a money cap needs prices this card does not have. */
export function cardLacksPrices(card: ModelCard): boolean {
  return isGenericCard(card) || (card.prices.inputPerMTok === 0 && card.prices.outputPerMTok === 0);
}

/** The budget view of a goal: spent, reserved (a call in flight), caps. */
export function budgetView(spent: SpendAmount, reserved: SpendAmount | null, caps: SpendCaps): BudgetView {
  return {
    spentUsd: spent.costUsd,
    reservedUsd: reserved?.costUsd ?? 0,
    capUsd: caps.maxCostUsd ?? null,
    spentTokens: spent.tokens,
    reservedTokens: reserved?.tokens ?? 0,
    capTokens: caps.maxTokens ?? null,
  };
}

/** One line: `$0.0123 spent, $0.0040 reserved, cap $0.0500 · 12000 tokens, cap 50000`. */
export function budgetLine(view: BudgetView): string {
  const money = `${usd(view.spentUsd)} spent, ${usd(view.reservedUsd)} reserved, cap ${
    view.capUsd === null ? 'none' : usd(view.capUsd)
  }`;
  const tokens = `${view.spentTokens} tokens, ${view.reservedTokens} reserved, cap ${view.capTokens ?? 'none'}`;
  return `${money} · ${tokens}`;
}

/** Dollars with four decimals: one request often costs a fraction of a cent. */
export function usd(amount: number): string {
  return `$${amount.toFixed(4)}`;
}

/**
 * Why `/model` to a model without prices is refused on a goal with a money cap (issue 24 §3): its
 * calls would count $0 against the cap. `unpriced` says which model and where its card goes.
 */
export function modelUnderCapRefusal(unpriced: string, capUsd: number): string {
  return `refused: ${unpriced}; this goal has a money cap (${usd(capUsd)}), which counts every call at its card's prices, so it runs only models that have them`;
}
