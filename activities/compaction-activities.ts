/**
 * Activities of compaction: resolving the model's context budget, and stage 2 (the summarizer).
 * Stage 1 (pruning) needs no activity: it is a plan in workflow state, applied when the context
 * is built for the next model step.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import {
  EarlierSummaryMissing,
  type PreparedSummary,
  prepareSummary,
  type SummarySource,
  UnusableSummary,
} from '../core/compaction/prepare-summary';
import { SUMMARIZER_SYSTEM_PROMPT } from '../core/compaction/summary-input';
import { FailureType } from '../core/errors';
import type { LedgerEntry } from '../core/ledger';
import { ledgerEntryFor } from '../core/ledger-entry';
import { MODEL_HEARTBEAT_INTERVAL_MS } from '../core/limits';
import { textOf, userText } from '../core/messages';
import { activityInstance, type BilledAttempts, type CallPricing } from '../core/paid-calls';
import { storeKeys } from '../core/store-keys';
import { estimateTokens } from '../core/tokens';
import type { RequestUsage } from '../core/usage';
import type { SessionStore } from '../store/types';
import { type ModelBudget, type ModelBudgetInput, resolveModelBudget } from './model-budget';
import { createModelClient, toActivityFailure } from './providers';
import type { ModelClient, ProviderEnv } from './providers/types';
import { type OutageContext, untilStored } from './store-outage';
import { type SummaryLedger, summaryLedger } from './summary-ledger';

/** Input of `summarize`. */
export interface SummarizeInput {
  sessionId: string;
  /** 1-based number of this compaction in the goal: the idempotency key of its summary. */
  compaction: number;
  /** The span as runs `[from, to]` of sequence numbers (summaries stored inside are not part of it). */
  spanRanges?: Array<[number, number]>;
  /** The span one seq each, as workflows before spanRanges sent it. */
  spanSeqs?: number[];
  /** The earlier summary: always merged into the new one, or carried over verbatim. */
  previousSummarySeq?: number;
  /** The focus hint of a manual `compact TOPIC`. */
  focus?: string;
  model: string;
  baseUrl?: string;
  /** The variable of an `openai-compatible` endpoint's key (the goal's `--api-key-env`). */
  apiKeyEnv?: string;
  /** The summarizer's own input budget, so its request fits its window. */
  maxInputTokens: number;
  /** Use the summary extracted from the transcript instead of calling a model. */
  extracted?: boolean;
  /**
   * How the summarizer's calls are priced in the daily ledger: its own card's prices, and the worst
   * case a billed request without reported usage counts at (core/paid-calls.ts). Absent: at no cost.
   */
  pricing?: CallPricing;
}

/** Result of `summarize`. */
export interface SummarizeResult {
  entry: LedgerEntry;
  usage: RequestUsage | null;
  extracted: boolean;
  /** The new summary carries the earlier one (merged, or its lines carried verbatim); absent from older workers. */
  carriesPrevious?: boolean;
  /** Requests before the one that answered that the provider billed without an answer (priced). */
  billed?: BilledAttempts;
}

/** The summarizer's request shrinks by this factor when it overflows its own window. */
const SUMMARIZER_SHRINK_FACTOR = 0.5;

/** Creates the compaction activities. */
export function createCompactionActivities(deps: { store: SessionStore; env: ProviderEnv }) {
  const { store } = deps;
  const clientFor = (model: string, baseUrl?: string, apiKeyEnv?: string): ModelClient =>
    createModelClient(model, { baseUrl, apiKeyEnv, env: deps.env });

  return {
    /** Resolves the model's card and computes its context budget (spec F-CARDS, F-BUDGET). */
    resolveModelBudget(input: ModelBudgetInput): Promise<ModelBudget> {
      return resolveModelBudget(deps.env, input);
    },

    /** Stage 2: replaces a span of the transcript with one structured summary, stored once. */
    async summarize(input: SummarizeInput): Promise<SummarizeResult> {
      const context = Context.current();
      const { info } = context;
      const ledger = summaryLedger(
        store,
        input,
        activityInstance(info.workflowExecution?.runId ?? 'standalone', info.activityId),
      );
      const session = await store.getSession(input.sessionId);
      const source: SummarySource = {
        messageAt: async (seq) =>
          (await store.listMessages(input.sessionId, { fromSeq: seq, toSeq: seq }))[0] ?? null,
        messagesUpTo: (toSeq) => store.listMessages(input.sessionId, { toSeq }),
        messageByKey: (key) => store.getMessageByKey(input.sessionId, key),
      };
      let prepared: PreparedSummary;
      try {
        prepared = await prepareSummary(
          source,
          {
            compaction: input.compaction,
            spanRanges: spanRangesOf(input),
            previousSummarySeq: input.previousSummarySeq,
            objective: session?.objective ?? '',
            focus: input.focus,
            maxInputTokens: input.maxInputTokens,
            extracted: input.extracted,
          },
          // The client is made only when a model is called: an extracted summary needs no provider.
          (request, maxTokens) =>
            callSummarizer(
              clientFor(input.model, input.baseUrl, input.apiKeyEnv),
              input,
              request,
              maxTokens,
              ledger,
            ),
        );
      } catch (err) {
        throw summaryFailure(err, Boolean(input.extracted));
      }
      // Built by this code, a summary carries the earlier one: merged by the model, or carried verbatim.
      if (prepared.kind === 'reuse') {
        const { seq, key, message } = prepared.entry;
        return {
          entry: ledgerEntryFor(seq, key, message),
          usage: null,
          extracted: false,
          carriesPrevious: true,
        };
      }
      const { key, message, usage, extracted } = prepared;
      // Paid for: a store outage now is waited out inside the attempt, as a model step's answer is.
      const outage: OutageContext = {
        signal: context.cancellationSignal,
        heartbeat: (waiting) => context.heartbeat({ compaction: input.compaction, ...waiting }),
        deadlineMs: info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs,
      };
      const { seq } = await untilStored('storing the summary', outage, async () => {
        if (usage) {
          await store.appendEvent(
            input.sessionId,
            'summarizer-usage',
            { compaction: input.compaction, usage },
            storeKeys.summaryUsageEvent(input.compaction),
          );
        }
        await ledger.flush();
        return store.appendMessage(input.sessionId, key, message);
      });
      log.info(
        `compaction ${input.compaction} of ${input.sessionId}: summarized ${prepared.spanMessages} messages`,
        {
          extracted,
          summaryChars: textOf(message).length,
          mergedEarlierSummary: input.previousSummarySeq !== undefined,
        },
      );
      const billed = ledger.billedBeforeAnswer();
      return {
        entry: ledgerEntryFor(seq, key, message),
        usage,
        extracted,
        carriesPrevious: true,
        ...(billed ? { billed } : {}),
      };
    },
  };
}

/** The span's runs, from either input shape. */
function spanRangesOf(input: SummarizeInput): Array<[number, number]> {
  return (
    input.spanRanges ??
    [...(input.spanSeqs ?? [])].sort((a, b) => a - b).map((seq): [number, number] => [seq, seq])
  );
}

/** A failure of preparing the summary, typed for the workflow's retry and failure-budget rules. */
function summaryFailure(err: unknown, extracted: boolean): unknown {
  if (err instanceof EarlierSummaryMissing) {
    return ApplicationFailure.create({ type: 'SummaryMissing', message: err.message, nonRetryable: true });
  }
  if (err instanceof UnusableSummary && !extracted) {
    return ApplicationFailure.create({
      type: FailureType.ProviderBadRequest,
      message: err.message,
      nonRetryable: true,
    });
  }
  return err;
}

/**
 * Calls the summarizer; when its own request overflows, shrinks the input once and retries. Returns the
 * input budget of the request that worked, which says how much of the earlier summary it saw.
 */
async function callSummarizer(
  client: ModelClient,
  input: SummarizeInput,
  request: (maxTokens: number) => string,
  budget: number,
  ledger: SummaryLedger,
): Promise<{ text: string; usage: RequestUsage; maxTokens: number }> {
  const context = Context.current();
  const heartbeat = setInterval(
    () => context.heartbeat({ compaction: input.compaction }),
    MODEL_HEARTBEAT_INTERVAL_MS,
  );
  const [provider, ...rest] = input.model.split(':');
  try {
    let maxTokens = budget;
    for (let attempt = 1; ; attempt++) {
      const prompt = request(maxTokens);
      // Billed once the provider answers it, whatever happens next (core/paid-calls.ts).
      let answering = false;
      try {
        const response = await client.stream({
          system: SUMMARIZER_SYSTEM_PROMPT,
          messages: [userText(prompt)],
          tools: [],
          stepNumber: 0,
          purpose: { kind: 'summary', compaction: input.compaction },
          abortSignal: context.cancellationSignal,
          onProgress: () => context.heartbeat({ compaction: input.compaction }),
          onBytes: (accepted) => {
            if (accepted) answering = true;
          },
        });
        await ledger.record(attempt, response.usage);
        return { text: response.text, usage: response.usage, maxTokens };
      } catch (err) {
        if (answering) await ledger.record(attempt, null);
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
