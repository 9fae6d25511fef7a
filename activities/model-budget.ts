/**
 * A goal's model budget: its card (window, output ceiling, prices) and the context budget computed
 * from it (spec F-CARDS, F-BUDGET). Resolved by the resolveModelBudget activity, and by openSession
 * for a new goal of PATCH.openInOneCall, so a goal starts with one local activity instead of two.
 */
import { type ContextBudget, computeBudget } from '../core/budget';
import type { ModelCard } from '../core/model-card';
import { homeOfProcess, resolveCard, userCardDirs } from './models/catalog';
import { providerReportedWindow } from './models/provider-window';
import type { ProviderEnv } from './providers/types';

/** Input of `resolveModelBudget`. */
export interface ResolveBudgetInput {
  model: string;
  baseUrl?: string;
  /** A window that overrides the card (config `context_window`), e.g. a local server's setting. */
  contextWindowTokens?: number;
  thresholdPct: number;
  /** The goal's workspace; unused since cards are never read from a workspace (kept: histories send it). */
  workspace?: string;
}

/** Input of `resolveModelBudget`'s summarizer part: the card the summarizer is priced on. */
export interface SummarizerCardInput {
  /** The goal's summarizer_model, when it has one (else the goal's model summarizes, on its card). */
  summarizerModel?: string;
}

/** What resolving a goal's budget takes. */
export type ModelBudgetInput = ResolveBudgetInput & SummarizerCardInput;

/** The budget of a goal's model, with its prices for cost accounting. */
export interface ModelBudget {
  budget: ContextBudget;
  /** The card behind the budget; its prices turn usage into cost. */
  card: ModelCard;
  /** Shown once when the model has no card of its own. */
  warning?: string;
  /** The card of the goal's summarizer_model, when it is another model: its calls are priced on it. */
  summarizerCard?: ModelCard;
}

/** Resolves the model's card and computes its context budget. */
export async function resolveModelBudget(env: ProviderEnv, input: ModelBudgetInput): Promise<ModelBudget> {
  const reported =
    input.contextWindowTokens ?? (await providerReportedWindow(input.model, env, input.baseUrl));
  // Never the workspace's cards: prices are the package's and the user's (issue 24 §3).
  const overlayDirs = userCardDirs(homeOfProcess());
  const resolved = resolveCard(input.model, { providerReportedContextTokens: reported, overlayDirs });
  const budget = computeBudget(
    { card: resolved.card, providerReportedContextTokens: resolved.providerReportedContextTokens },
    input.thresholdPct,
  );
  // The summarizer's own card prices its calls (issue 24 item 4); only its prices and output ceiling matter.
  const summarizer =
    input.summarizerModel && input.summarizerModel !== input.model
      ? resolveCard(input.summarizerModel, { overlayDirs }).card
      : undefined;
  return {
    budget,
    card: resolved.card,
    warning: resolved.warning,
    ...(summarizer ? { summarizerCard: summarizer } : {}),
  };
}
