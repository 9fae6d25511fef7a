/**
 * Activities of compaction: resolving the model's context budget, and stage 2 (the summarizer).
 * Stage 1 (pruning) needs no activity: it is a plan in workflow state, applied when the context
 * is built for the next model step.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { type ContextBudget, computeBudget } from '../core/budget';
import { extractedSummary } from '../core/compaction/extracted-summary';
import { filesModifiedFromToolLog } from '../core/compaction/files-modified';
import { buildSummarizerInput, SUMMARIZER_SYSTEM_PROMPT } from '../core/compaction/summary-input';
import {
  composeSummaryMessage,
  isUsableSummary,
  normalizeSummary,
  parseSummarySections,
} from '../core/compaction/summary-text';
import { FailureType } from '../core/errors';
import type { LedgerEntry } from '../core/ledger';
import { ledgerEntryFor } from '../core/ledger-entry';
import { MODEL_HEARTBEAT_INTERVAL_MS } from '../core/limits';
import { textOf, userText } from '../core/messages';
import type { ModelCard } from '../core/model-card';
import { estimateTokens } from '../core/tokens';
import type { RequestUsage } from '../core/usage';
import type { SessionStore } from '../store/types';
import { resolveCard } from './models/catalog';
import { providerReportedWindow } from './models/provider-window';
import { createModelClient, toActivityFailure } from './providers';
import type { ModelClient, ProviderEnv } from './providers/types';

/** Input of `resolveModelBudget`. */
export interface ResolveBudgetInput {
  model: string;
  baseUrl?: string;
  /** A window that overrides the card (config `context_window`), e.g. a local server's setting. */
  contextWindowTokens?: number;
  thresholdPct: number;
}

/** The budget of a goal's model, with its prices for cost accounting. */
export interface ModelBudget {
  budget: ContextBudget;
  /** The card behind the budget; its prices turn usage into cost. */
  card: ModelCard;
  /** Shown once when the model has no card of its own. */
  warning?: string;
}

/** Input of `summarize`. */
export interface SummarizeInput {
  sessionId: string;
  /** 1-based number of this compaction in the goal: the idempotency key of its summary. */
  compaction: number;
  spanSeqs: number[];
  previousSummarySeq?: number;
  /** The focus hint of a manual `compact TOPIC`. */
  focus?: string;
  model: string;
  baseUrl?: string;
  /** The summarizer's own input budget, so its request fits its window. */
  maxInputTokens: number;
  /** Use the summary extracted from the transcript instead of calling a model. */
  extracted?: boolean;
}

/** Result of `summarize`. */
export interface SummarizeResult {
  entry: LedgerEntry;
  usage: RequestUsage | null;
  extracted: boolean;
}

/** The summarizer's request shrinks by this factor when it overflows its own window. */
const SUMMARIZER_SHRINK_FACTOR = 0.5;

/** Creates the compaction activities. */
export function createCompactionActivities(deps: { store: SessionStore; env: ProviderEnv }) {
  const { store } = deps;
  const clientFor = (model: string, baseUrl?: string): ModelClient =>
    createModelClient(model, { baseUrl, env: deps.env });

  return {
    /** Resolves the model's card and computes its context budget (spec F-CARDS, F-BUDGET). */
    async resolveModelBudget(input: ResolveBudgetInput): Promise<ModelBudget> {
      const reported =
        input.contextWindowTokens ?? (await providerReportedWindow(input.model, deps.env, input.baseUrl));
      const resolved = resolveCard(input.model, { providerReportedContextTokens: reported });
      const budget = computeBudget(
        { card: resolved.card, providerReportedContextTokens: resolved.providerReportedContextTokens },
        input.thresholdPct,
      );
      return { budget, card: resolved.card, warning: resolved.warning };
    },

    /** Stage 2: replaces a span of the transcript with one structured summary, stored once. */
    async summarize(input: SummarizeInput): Promise<SummarizeResult> {
      const key = `summary:${input.compaction}`;
      const existing = await store.getMessageByKey(input.sessionId, key);
      if (existing)
        return { entry: ledgerEntryFor(existing.seq, key, existing.message), usage: null, extracted: false };

      const session = await store.getSession(input.sessionId);
      const objective = session?.objective ?? '';
      const upTo = Math.max(...input.spanSeqs);
      const transcript = await store.listMessages(input.sessionId, { toSeq: upTo });
      const inSpan = new Set(input.spanSeqs);
      const span = transcript.filter((entry) => inSpan.has(entry.seq)).map((entry) => entry.message);
      const previous = input.previousSummarySeq
        ? transcript.find((entry) => entry.seq === input.previousSummarySeq)
        : undefined;
      // Derived from the whole tool log, not from the model, so no edited file is forgotten.
      const filesModified = filesModifiedFromToolLog(transcript.map((entry) => entry.message));

      let summaryText: string;
      let usage: RequestUsage | null = null;
      const extracted = Boolean(input.extracted);
      if (extracted) {
        summaryText = extractedSummary({ objective, span, filesModified });
      } else {
        const result = await callSummarizer(clientFor(input.model, input.baseUrl), {
          ...input,
          objective,
          span,
          previousSummary: previous ? textOf(previous.message) : undefined,
        });
        summaryText = result.text;
        usage = result.usage;
      }
      const parsed = parseSummarySections(summaryText);
      if (!isUsableSummary(parsed)) {
        if (extracted) throw new Error('the extracted summary has no sections');
        throw ApplicationFailure.create({
          type: FailureType.ProviderBadRequest,
          message: 'the summarizer returned no usable summary (none of the required sections)',
          nonRetryable: true,
        });
      }
      const text = composeSummaryMessage({
        summaryText: normalizeSummary(parsed),
        filesModified,
        compactedMessages: span.length,
        fromSeq: Math.min(...input.spanSeqs),
        toSeq: upTo,
        topic: input.focus,
      });
      const message = userText(text);
      if (usage) {
        await store.appendEvent(
          input.sessionId,
          'summarizer-usage',
          { compaction: input.compaction, usage },
          `summary-usage:${input.compaction}`,
        );
      }
      const { seq } = await store.appendMessage(input.sessionId, key, message);
      log.info(`compaction ${input.compaction} of ${input.sessionId}: summarized ${span.length} messages`, {
        extracted,
        summaryChars: text.length,
      });
      return { entry: ledgerEntryFor(seq, key, message), usage, extracted };
    },
  };
}

/** Calls the summarizer; when its own request overflows, shrinks the input once and retries. */
async function callSummarizer(
  client: ModelClient,
  input: SummarizeInput & {
    objective: string;
    span: import('../core/messages').StoredMessage[];
    previousSummary?: string;
  },
): Promise<{ text: string; usage: RequestUsage }> {
  const context = Context.current();
  const heartbeat = setInterval(
    () => context.heartbeat({ compaction: input.compaction }),
    MODEL_HEARTBEAT_INTERVAL_MS,
  );
  const [provider, ...rest] = input.model.split(':');
  try {
    let maxTokens = input.maxInputTokens;
    for (let attempt = 1; ; attempt++) {
      const prompt = buildSummarizerInput({
        objective: input.objective,
        span: input.span,
        previousSummary: input.previousSummary,
        focus: input.focus,
        maxTokens,
      });
      try {
        const response = await client.stream({
          system: SUMMARIZER_SYSTEM_PROMPT,
          messages: [userText(prompt)],
          tools: [],
          stepNumber: 0,
          purpose: { kind: 'summary', compaction: input.compaction },
          abortSignal: context.cancellationSignal,
          onProgress: () => context.heartbeat({ compaction: input.compaction }),
        });
        return { text: response.text, usage: response.usage };
      } catch (err) {
        if (context.cancellationSignal.aborted) throw new CancelledFailure('summarizer cancelled');
        const failure =
          err instanceof ApplicationFailure
            ? err
            : toActivityFailure(err, { provider: provider ?? input.model, model: rest.join(':') });
        if (failure.type === FailureType.ContextOverflow && attempt === 1) {
          // Halve what was actually sent, not the budget: a small request under a big budget must shrink too.
          maxTokens = Math.floor(Math.min(maxTokens, estimateTokens(prompt)) * SUMMARIZER_SHRINK_FACTOR);
          log.warn(`summarizer request overflowed; retrying with ${maxTokens} input tokens`);
          continue;
        }
        throw failure;
      }
    }
  } finally {
    clearInterval(heartbeat);
  }
}
