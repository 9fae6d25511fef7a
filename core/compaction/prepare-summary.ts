/**
 * What the summarize activity stores (spec S-COMPACT stage 2), without its I/O: which messages it reads,
 * how the earlier summary is carried, and when a summary an earlier attempt stored may be reused. The
 * activity gives it the store and the model call; tests give it an in-memory transcript and a fake
 * summarizer, so the whole path a fact takes from one summary into the next is tested as it runs.
 */
import { type StoredMessage, type TranscriptEntry, textOf, userText } from '../messages';
import { KEY_PREFIX, storeKeys } from '../store-keys';
import type { RequestUsage } from '../usage';
import { extractedSummary } from './extracted-summary';
import { filesModifiedFromToolLog } from './files-modified';
import { carriedSummary, previousSummaryBody, summaryRangeOf } from './summary-carry';
import { buildSummarizerInput, previousSummaryShown } from './summary-input';
import {
  composeSummaryMessage,
  isUsableSummary,
  normalizeSummary,
  parseSummarySections,
} from './summary-text';

/** The transcript as the summary needs it. */
export interface SummarySource {
  /** One message by its sequence number. */
  messageAt(seq: number): Promise<TranscriptEntry | null>;
  /** Every message up to `toSeq`, in order. */
  messagesUpTo(toSeq: number): Promise<TranscriptEntry[]>;
  messageByKey(key: string): Promise<TranscriptEntry | null>;
}

/** What to summarize. */
export interface SummaryRequest {
  /** 1-based number of this compaction: the key of its summary. */
  compaction: number;
  /** The span as runs `[from, to]`, ascending. */
  spanRanges: Array<[number, number]>;
  previousSummarySeq?: number;
  objective: string;
  focus?: string;
  /** The summarizer's input budget. */
  maxInputTokens: number;
  /** Extract the summary from the transcript instead of calling a model. */
  extracted?: boolean;
}

/** Calls the model with the request text built for a budget; returns its reply and the budget that worked. */
export type Summarizer = (
  request: (maxTokens: number) => string,
  maxTokens: number,
) => Promise<{ text: string; usage: RequestUsage; maxTokens: number }>;

/** A summary to store, or the one an earlier attempt stored for the same span. */
export type PreparedSummary =
  | { kind: 'reuse'; entry: TranscriptEntry }
  | {
      kind: 'new';
      key: string;
      message: StoredMessage;
      usage: RequestUsage | null;
      extracted: boolean;
      spanMessages: number;
    };

/** Raised when the earlier summary cannot be read: compacting without it would lose its facts. */
export class EarlierSummaryMissing extends Error {}

/** Raised when neither the model nor the extraction produced any of the six sections. */
export class UnusableSummary extends Error {}

/**
 * The key to store under, or a stored summary to reuse. A summary stored by an attempt whose result was
 * lost is reused only for the same span: one made for an earlier, shorter span would drop the rest.
 */
async function keyOrReuse(
  source: SummarySource,
  compaction: number,
  from: number,
  to: number,
): Promise<{ key: string } | { entry: TranscriptEntry }> {
  const key = storeKeys.summary(compaction);
  const existing = await source.messageByKey(key);
  if (!existing) return { key };
  const range = summaryRangeOf(textOf(existing.message));
  if (range && range[0] === from && range[1] === to) return { entry: existing };
  const retried = storeKeys.summaryForSpan(compaction, from, to);
  const again = await source.messageByKey(retried);
  return again ? { entry: again } : { key: retried };
}

/** The earlier summary's body, read by its own seq: stored after the span it replaced, it may lie past this one. */
async function earlierSummary(source: SummarySource, seq: number | undefined): Promise<string | undefined> {
  if (seq === undefined) return undefined;
  const entry = await source.messageAt(seq);
  if (!entry) throw new EarlierSummaryMissing(`the earlier summary (message ${seq}) is not in the store`);
  return previousSummaryBody(textOf(entry.message));
}

/** Prepares the summary of a span: the stored message text, carrying the earlier summary. */
export async function prepareSummary(
  source: SummarySource,
  request: SummaryRequest,
  summarize: Summarizer,
): Promise<PreparedSummary> {
  const ranges = [...request.spanRanges].sort((a, b) => a[0] - b[0]);
  if (ranges.length === 0) throw new Error(`summary ${request.compaction}: the span is empty`);
  const fromSeq = ranges[0][0];
  const toSeq = Math.max(...ranges.map(([, to]) => to));
  const target = await keyOrReuse(source, request.compaction, fromSeq, toSeq);
  if ('entry' in target) return { kind: 'reuse', entry: target.entry };

  const transcript = await source.messagesUpTo(toSeq);
  const inSpan = (seq: number) => ranges.some(([from, to]) => seq >= from && seq <= to);
  // Summaries stored inside the span's runs were merged already, or never applied: not span items.
  const span = transcript
    .filter((entry) => inSpan(entry.seq) && !entry.key.startsWith(KEY_PREFIX.summary))
    .map((entry) => entry.message);
  const previous = await earlierSummary(source, request.previousSummarySeq);
  // Derived from the whole tool log, not from the model, so no edited file is forgotten.
  const filesModified = filesModifiedFromToolLog(transcript.map((entry) => entry.message));

  let summaryText: string;
  let usage: RequestUsage | null = null;
  const extracted = Boolean(request.extracted);
  if (extracted) {
    summaryText = extractedSummary({
      objective: request.objective,
      span,
      filesModified,
      previousSummary: previous,
    });
  } else {
    const reply = await summarize(
      (maxTokens) =>
        buildSummarizerInput({
          objective: request.objective,
          span,
          previousSummary: previous,
          focus: request.focus,
          maxTokens,
        }),
      request.maxInputTokens,
    );
    // What the summarizer could not see of the earlier summary is carried over verbatim.
    const whole = previous === undefined || previousSummaryShown(previous, reply.maxTokens).whole;
    summaryText = carriedSummary(reply.text, previous === undefined ? undefined : { body: previous, whole });
    usage = reply.usage;
  }
  const parsed = parseSummarySections(summaryText);
  if (!isUsableSummary(parsed)) {
    throw new UnusableSummary(
      extracted
        ? 'the extracted summary has no sections'
        : 'the summarizer returned no usable summary (none of the required sections)',
    );
  }
  const text = composeSummaryMessage({
    summaryText: normalizeSummary(parsed),
    filesModified,
    compactedMessages: span.length,
    fromSeq,
    toSeq,
    topic: request.focus,
  });
  return {
    kind: 'new',
    key: target.key,
    message: userText(text),
    usage,
    extracted,
    spanMessages: span.length,
  };
}
