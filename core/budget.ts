/**
 * The context budget calculator (spec F-BUDGET, S-GAUGE): from a model card to the enforced window, the
 * output reserve, the usable input and the warn / compact / stop thresholds; the policy mapping an input
 * estimate to normal / warn / compact / stop; the gauge level; and the `/compact policy` view.
 *
 * Every threshold is a percentage of the usable input (the enforced window less the output reserve),
 * which is what spec S-AUTO calls the model's effective window: the estimate being judged is the input
 * of the next request, and input can only ever fill that much. Taking 85 % of the whole window instead
 * would put the compact threshold past the hard stop whenever the output reserve exceeds 15 % of the
 * window (every 200k-window model with a 64k output ceiling), so auto-compact would never fire before a
 * request is already over budget.
 */
import { ConfigError } from './errors';
import type { ModelCard } from './model-card';

/** Default `auto_compact_threshold_pct` (spec S-AUTO). */
export const DEFAULT_COMPACT_THRESHOLD_PCT = 85;
/** The output reserve never takes more than this share of the enforced window (spec F-BUDGET). */
export const OUTPUT_RESERVE_MAX_PCT = 25;
/** The gauge turns yellow at this occupancy (spec S-GAUGE)… */
export const GAUGE_YELLOW_PCT = 75;
/** …and red at this one. */
export const GAUGE_RED_PCT = 90;
/** The warn threshold is the gauge's yellow, so the warning and the colour change agree. */
export const WARN_PCT = GAUGE_YELLOW_PCT;

/** Which window the budget enforces (spec F-BUDGET: provider-reported, else guaranteed, else advertised). */
export type WindowSource = 'provider-reported' | 'guaranteed' | 'advertised';

/** What the policy says about an input estimate (spec 003, "Compaction Decision Points"). */
export type BudgetState = 'normal' | 'warn' | 'compact' | 'stop';

/** Colour of the context gauge. */
export type GaugeLevel = 'green' | 'yellow' | 'red';

/** A model's context budget, all in tokens. */
export interface ContextBudget {
  /** The enforced context window (input plus output). */
  windowTokens: number;
  windowSource: WindowSource;
  /** Kept free for the answer: the card's output ceiling, capped at OUTPUT_RESERVE_MAX_PCT of the window. */
  outputReserveTokens: number;
  /** Window less the output reserve: the most input one request may carry. */
  usableInputTokens: number;
  /** At or above this the state is `warn`. */
  warnAtTokens: number;
  /** At or above this the state is `compact`. */
  compactAtTokens: number;
  /** The `auto_compact_threshold_pct` the compact threshold was computed with. */
  compactThresholdPct: number;
  /** Above this the state is `stop`; equal to usableInputTokens. */
  stopAtTokens: number;
}

/** The card to budget for and, when the provider reported one, the window it enforces. */
export interface BudgetSource {
  card: ModelCard;
  providerReportedContextTokens?: number;
}

/**
 * Computes a model's budget. `source` may be a catalog's ResolvedCard as is. Throws ConfigError when
 * `compactThresholdPct` is not in (0, 100].
 */
export function computeBudget(
  source: BudgetSource,
  compactThresholdPct: number = DEFAULT_COMPACT_THRESHOLD_PCT,
): ContextBudget {
  if (!Number.isFinite(compactThresholdPct) || compactThresholdPct <= 0 || compactThresholdPct > 100) {
    throw new ConfigError(
      `auto_compact_threshold_pct must be a number above 0 and at most 100, got ${compactThresholdPct}`,
    );
  }
  const { windowTokens, windowSource } = enforcedWindow(source);
  const outputReserveTokens = Math.min(
    source.card.maxOutputTokens,
    Math.floor((windowTokens * OUTPUT_RESERVE_MAX_PCT) / 100),
  );
  const usableInputTokens = windowTokens - outputReserveTokens;
  // Floors, not rounding: a threshold a token early is harmless, a token late is not.
  const compactAtTokens = Math.floor((usableInputTokens * compactThresholdPct) / 100);
  // A threshold percentage under the warn level leaves no warn band rather than inverting the order.
  const warnAtTokens = Math.min(Math.floor((usableInputTokens * WARN_PCT) / 100), compactAtTokens);
  return {
    windowTokens,
    windowSource,
    outputReserveTokens,
    usableInputTokens,
    warnAtTokens,
    compactAtTokens,
    compactThresholdPct,
    stopAtTokens: usableInputTokens,
  };
}

/** Maps the estimated input of the next request to the policy's state. */
export function classifyBudget(estimateTokens: number, budget: ContextBudget): BudgetState {
  if (estimateTokens > budget.stopAtTokens) return 'stop';
  if (estimateTokens >= budget.compactAtTokens) return 'compact';
  if (estimateTokens >= budget.warnAtTokens) return 'warn';
  return 'normal';
}

/** The gauge colour for `usedTokens` of `windowTokens` (yellow at 75 %, red at 90 %). */
export function gaugeLevel(usedTokens: number, windowTokens: number): GaugeLevel {
  // An empty window is full by definition; comparing products avoids rounding at the boundaries.
  if (windowTokens <= 0) return 'red';
  if (usedTokens * 100 >= windowTokens * GAUGE_RED_PCT) return 'red';
  if (usedTokens * 100 >= windowTokens * GAUGE_YELLOW_PCT) return 'yellow';
  return 'green';
}

/** Auto-compact settings and failure counter, as the workflow keeps them (spec S-BUDGET). */
export interface AutoCompactStatus {
  enabled: boolean;
  /** Consecutive summarizer failures. */
  failures: number;
  maxFailures: number;
  /** Paused after maxFailures failures in a row, until a compaction succeeds. */
  paused: boolean;
}

/** The data of `/compact policy` (spec S-GAUGE). */
export interface PolicyView {
  windowTokens: number;
  windowSource: WindowSource;
  outputReserveTokens: number;
  usableInputTokens: number;
  thresholdTokens: number;
  thresholdPct: number;
  usedTokens: number;
  /** usedTokens as a whole percentage of the usable input. */
  usedPct: number;
  state: BudgetState;
  gauge: GaugeLevel;
  autoCompact: 'on' | 'off' | 'paused';
  failures: number;
  maxFailures: number;
  /** The low-water mark a compaction aims below, in tokens (when known). */
  lowWaterTokens?: number;
  /** The size of the goal's control state in workflow memory (shown by the policy query only). */
  controlState?: { bytes: number; ledgerEntries: number; ledgerMessages: number; budgetBytes: number };
}

/** Builds the `/compact policy` data for the current occupancy. */
export function policyView(input: {
  budget: ContextBudget;
  usedTokens: number;
  autoCompact: AutoCompactStatus;
}): PolicyView {
  const { budget, usedTokens, autoCompact } = input;
  const usable = budget.usableInputTokens;
  return {
    windowTokens: budget.windowTokens,
    windowSource: budget.windowSource,
    outputReserveTokens: budget.outputReserveTokens,
    usableInputTokens: usable,
    thresholdTokens: budget.compactAtTokens,
    thresholdPct: budget.compactThresholdPct,
    usedTokens,
    usedPct: usable > 0 ? Math.round((usedTokens * 100) / usable) : 100,
    state: classifyBudget(usedTokens, budget),
    gauge: gaugeLevel(usedTokens, usable),
    autoCompact: !autoCompact.enabled ? 'off' : autoCompact.paused ? 'paused' : 'on',
    failures: autoCompact.failures,
    maxFailures: autoCompact.maxFailures,
  };
}

/** Status words of the policy view, by state. */
const STATUS_TEXT: Record<BudgetState, string> = {
  normal: 'OK',
  warn: 'WARNING',
  compact: 'OVER THRESHOLD',
  stop: 'OVER BUDGET',
};

/** Width of the label column, as in the spec's example. */
const LABEL_WIDTH = 17;

/** Renders the policy view as the spec's `/compact policy` text. */
export function renderPolicy(view: PolicyView): string {
  // A label as long as the column still gets a space before its value.
  const line = (label: string, value: string) => `${`${label}:`.padEnd(LABEL_WIDTH - 1)} ${value}`;
  return [
    line(
      'context window',
      `${view.windowTokens} tokens (${view.windowSource}; ${view.usableInputTokens} usable input, ` +
        `${view.outputReserveTokens} reserved for output)`,
    ),
    line('threshold', `${view.thresholdTokens} tokens (${view.thresholdPct} % of usable input)`),
    line('currently used', `${view.usedTokens} tokens`),
    line('status', `${STATUS_TEXT[view.state]} (${view.usedPct}%)`),
    '',
    line('auto-compact', view.autoCompact),
    line('failures', `${view.failures} / ${view.maxFailures}`),
    ...(view.lowWaterTokens !== undefined ? [line('compacts down to', `${view.lowWaterTokens} tokens`)] : []),
    ...(view.controlState
      ? [
          line(
            'control state',
            `${view.controlState.bytes} bytes of ${view.controlState.budgetBytes} (ledger: ${view.controlState.ledgerEntries} entries for ${view.controlState.ledgerMessages} messages)`,
          ),
        ]
      : []),
  ].join('\n');
}

function enforcedWindow(source: BudgetSource): { windowTokens: number; windowSource: WindowSource } {
  const reported = source.providerReportedContextTokens;
  if (reported !== undefined && Number.isSafeInteger(reported) && reported > 0) {
    return { windowTokens: reported, windowSource: 'provider-reported' };
  }
  const guaranteed = source.card.guaranteedContextTokens;
  if (guaranteed !== undefined) return { windowTokens: guaranteed, windowSource: 'guaranteed' };
  return { windowTokens: source.card.advertisedContextTokens, windowSource: 'advertised' };
}
