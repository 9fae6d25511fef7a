/**
 * What requests cost and the per-model usage breakdown behind `goalrun stats` (spec S-GAUGE: input,
 * output, cache read/write, per model; spec F-USAGE: summarizer usage folded into the operation that
 * triggered it). Pure: cards come in as data.
 */
import { MAX_MODELS_IN_BREAKDOWN } from './limits';
import { isGenericCard, type ModelCard } from './model-card';
import type { BilledAttempts } from './paid-calls';
import { formatTable } from './table';
import type { RequestUsage, UsageTotals } from './usage';

/** Card prices are per this many tokens. */
export const TOKENS_PER_PRICE_UNIT = 1_000_000;
/** Decimal places of a rendered USD amount: single requests often cost a fraction of a cent. */
const USD_DECIMALS = 4;

/**
 * USD cost of one request. `inputTokens` is the provider's total input, cache reads and writes included
 * (as the AI SDK reports it), so only the remainder is billed at the plain input price.
 */
export function costOf(usage: RequestUsage, card: Pick<ModelCard, 'prices'>): number {
  const { prices } = card;
  // Clamped: a provider that reports input without the cached part must not produce a negative charge.
  const plainInput = Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens);
  // Entries written for an hour cost more than the 5-minute ones the write price is for.
  const hourWrites = Math.min(usage.cacheWrite1hTokens ?? 0, usage.cacheWriteTokens);
  return (
    (plainInput * prices.inputPerMTok +
      usage.cacheReadTokens * prices.cacheReadPerMTok +
      (usage.cacheWriteTokens - hourWrites) * prices.cacheWritePerMTok +
      hourWrites * (prices.cacheWrite1hPerMTok ?? prices.cacheWritePerMTok) +
      usage.outputTokens * prices.outputPerMTok) /
    TOKENS_PER_PRICE_UNIT
  );
}

/** Token counts and their cost. */
export interface TokenCost {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
}

/** Usage of one model. The counts include summarizer requests; `summarizer` says how much of them. */
export interface ModelUsage extends TokenCost {
  requests: number;
  /** Requests that were compaction summaries (counted in `requests` too). */
  summarizerRequests: number;
  /** The summarizer's share of the counts above, already included in them: never add it again. */
  summarizer: TokenCost;
  /** Requests made under the generic card, whose prices are unknown, so their cost counts as 0. */
  unpricedRequests: number;
  /**
   * Attempts the provider billed that gave no answer the goal used (a stalled stream, an error
   * mid-answer, an answer the store never took), already included in the counts above; absent in
   * breakdowns from before they were counted.
   */
  retries?: RetryCost;
}

/** The billed attempts' share of a model's usage. */
export interface RetryCost extends TokenCost {
  requests: number;
  /** Attempts that reported no usage, counted at the call's worst case. */
  atReservation: number;
}

/** Usage by model specifier (`provider:model`). Plain data, so it can live in workflow state. */
export type UsageBreakdown = Record<string, ModelUsage>;

const ZERO_COST: TokenCost = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd: 0,
};

const ZERO_MODEL_USAGE: ModelUsage = {
  ...ZERO_COST,
  requests: 0,
  summarizerRequests: 0,
  summarizer: ZERO_COST,
  unpricedRequests: 0,
};

/** What addToBreakdown needs to know about a request besides its usage. */
export interface RequestKind {
  /** The request was a compaction summary, made on behalf of the operation being counted. */
  summarizer: boolean;
  /** The card of the model that served it, for its prices. */
  card: ModelCard;
  /** What the request cost when it was priced already (summarizer attempts the ledger recorded). */
  costUsd?: number;
  /** How many requests the usage adds up (billed summarizer attempts); 1 when absent. */
  requests?: number;
}

/**
 * Adds one request to a breakdown, returning a new one. Add a compaction's summarizer requests to the
 * breakdown of the operation that triggered it, with `summarizer: true`: they count in its totals once,
 * and the summarizer sub-total shows their share.
 */
export function addToBreakdown(
  breakdown: UsageBreakdown,
  model: string,
  usage: RequestUsage,
  kind: RequestKind,
): UsageBreakdown {
  const request: TokenCost = {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cacheReadTokens,
    cacheWriteTokens: usage.cacheWriteTokens,
    costUsd: kind.costUsd ?? costOf(usage, kind.card),
  };
  const requests = kind.requests ?? 1;
  const added: ModelUsage = {
    ...request,
    requests,
    summarizerRequests: kind.summarizer ? requests : 0,
    summarizer: kind.summarizer ? request : ZERO_COST,
    unpricedRequests: isGenericCard(kind.card) ? requests : 0,
  };
  return addUnder(breakdown, model, added);
}

/**
 * Adds a step's billed attempts (priced already, core/paid-calls.ts) to a breakdown, returning a new
 * one: they count in the model's totals and again in its `retries` sub-total.
 */
export function addBilledToBreakdown(
  breakdown: UsageBreakdown,
  model: string,
  billed: BilledAttempts,
  card: ModelCard | null,
): UsageBreakdown {
  const cost: TokenCost = { ...billed.usage, costUsd: billed.costUsd };
  const added: ModelUsage = {
    ...cost,
    requests: billed.attempts,
    summarizerRequests: 0,
    summarizer: ZERO_COST,
    unpricedRequests: card === null || isGenericCard(card) ? billed.attempts : 0,
    retries: { ...cost, requests: billed.attempts, atReservation: billed.atReservation },
  };
  return addUnder(breakdown, model, added);
}

function addUnder(breakdown: UsageBreakdown, model: string, added: ModelUsage): UsageBreakdown {
  // A goal switched between many models counts the later ones together: the breakdown lives in state.
  const key =
    model in breakdown || Object.keys(breakdown).length < MAX_MODELS_IN_BREAKDOWN - 1
      ? model
      : OTHER_MODELS_KEY;
  return { ...breakdown, [key]: addModelUsage(breakdown[key] ?? ZERO_MODEL_USAGE, added) };
}

/** The breakdown row of the models beyond MAX_MODELS_IN_BREAKDOWN. */
export const OTHER_MODELS_KEY = '(other models)';

/** Folds one breakdown into another (an operation's into the session's), returning a new one. */
export function mergeBreakdowns(into: UsageBreakdown, from: UsageBreakdown): UsageBreakdown {
  const merged: UsageBreakdown = { ...into };
  for (const [model, usage] of Object.entries(from)) {
    merged[model] = addModelUsage(merged[model] ?? ZERO_MODEL_USAGE, usage);
  }
  return merged;
}

/** All models of a breakdown added up. */
export function breakdownTotal(breakdown: UsageBreakdown): ModelUsage {
  return Object.values(breakdown).reduce(addModelUsage, ZERO_MODEL_USAGE);
}

/** Renders `goalrun stats`: the session counters, the cost, and the per-model table. */
export function renderStats(breakdown: UsageBreakdown, totals: UsageTotals): string {
  const total = breakdownTotal(breakdown);
  const summarizerNote =
    total.summarizerRequests > 0
      ? ` (summarizer: ${plural(total.summarizerRequests, 'request')}, ${usd(total.summarizer.costUsd)})`
      : '';
  const retries = total.retries;
  const lines = [
    `requests:         ${totals.requests}`,
    `input tokens:     ${totals.inputTokens}`,
    `output tokens:    ${totals.outputTokens}`,
    `cache read:       ${totals.cacheReadTokens}`,
    `cache write:      ${totals.cacheWriteTokens}`,
    `largest request:  ${totals.contextTokens} tokens`,
    `cost:             ${costCell(total)}${summarizerNote}`,
    ...(retries && retries.requests > 0 ? [`retries:          ${retriesLine(retries)}`] : []),
  ];
  const models = Object.keys(breakdown).sort();
  if (models.length > 0) {
    const rows: string[][] = [['model', 'requests', 'input', 'output', 'cache read', 'cache write', 'cost']];
    for (const model of models) {
      const usage = breakdown[model];
      rows.push([model, ...countCells(usage.requests, usage), costCell(usage)]);
      if (usage.summarizerRequests > 0) {
        const share = usage.summarizer;
        rows.push([
          '  of which summarizer',
          ...countCells(usage.summarizerRequests, share),
          usd(share.costUsd),
        ]);
      }
      if (usage.retries && usage.retries.requests > 0) {
        const share = usage.retries;
        rows.push(['  of which retries', ...countCells(share.requests, share), usd(share.costUsd)]);
      }
    }
    lines.push('', 'per model:', ...table(rows).map((row) => `  ${row}`));
  }
  if (total.unpricedRequests > 0) {
    lines.push(
      '',
      `* ${plural(total.unpricedRequests, 'request')} to models without a model card: their cost is unknown and not included`,
    );
  }
  return lines.join('\n');
}

/**
 * `2 attempts, $0.0200 (1 at its reservation: no usage reported)`: the attempts the provider billed
 * that gave no answer the goal used, included in the cost above.
 */
function retriesLine(retries: RetryCost): string {
  const estimated =
    retries.atReservation > 0
      ? ` (${retries.atReservation} at ${retries.atReservation === 1 ? 'its' : 'their'} reservation: no usage reported)`
      : '';
  return `${plural(retries.requests, 'attempt')}, ${usd(retries.costUsd)}${estimated}`;
}

function addModelUsage(a: ModelUsage, b: ModelUsage): ModelUsage {
  const retries = addRetries(a.retries, b.retries);
  return {
    ...addCost(a, b),
    requests: a.requests + b.requests,
    summarizerRequests: a.summarizerRequests + b.summarizerRequests,
    summarizer: addCost(a.summarizer, b.summarizer),
    unpricedRequests: a.unpricedRequests + b.unpricedRequests,
    ...(retries ? { retries } : {}),
  };
}

function addRetries(a: RetryCost | undefined, b: RetryCost | undefined): RetryCost | undefined {
  if (!a || !b) return a ?? b;
  return {
    ...addCost(a, b),
    requests: a.requests + b.requests,
    atReservation: a.atReservation + b.atReservation,
  };
}

function addCost(a: TokenCost, b: TokenCost): TokenCost {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    costUsd: a.costUsd + b.costUsd,
  };
}

function countCells(requests: number, counts: TokenCost): string[] {
  return [
    requests,
    counts.inputTokens,
    counts.outputTokens,
    counts.cacheReadTokens,
    counts.cacheWriteTokens,
  ].map(String);
}

/** A cost with a `*` when some of its requests could not be priced (see the footnote). */
function costCell(usage: ModelUsage): string {
  return `${usd(usage.costUsd)}${usage.unpricedRequests > 0 ? '*' : ''}`;
}

function usd(amount: number): string {
  return `$${amount.toFixed(USD_DECIMALS)}`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Left-aligns the first column and right-aligns the others, two spaces apart. */
function table(rows: string[][]): string[] {
  return formatTable(
    rows,
    rows[0].map((_, column) => (column === 0 ? 'start' : 'end')),
  );
}
