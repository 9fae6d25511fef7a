/**
 * Builds what the model sees from the transcript and the workflow's context plan: the first
 * message, the summary, kept user messages, then the verbatim tail with pruned outputs as stubs.
 */
import { elideLargeArgs, renderStubbedToolResult } from '../core/compaction/stub';
import type { ContextPlan } from '../core/context-plan';
import { LARGE_ARG_MIN_CHARS } from '../core/ledger-entry';
import type { StoredMessage, ToolCallPart, TranscriptEntry } from '../core/messages';
import { KEY_PREFIX } from '../core/store-keys';
import type { SessionStore } from '../store/types';

/** Reads one message by sequence number. */
async function messageAt(
  store: SessionStore,
  sessionId: string,
  seq: number,
): Promise<TranscriptEntry | null> {
  const [entry] = await store.listMessages(sessionId, { fromSeq: seq, toSeq: seq });
  return entry ?? null;
}

/**
 * The messages of a model request. Without a plan (or before any compaction) it is the whole
 * transcript up to `upToSeq`.
 */
export async function buildContext(
  store: SessionStore,
  sessionId: string,
  upToSeq: number,
  plan?: ContextPlan,
): Promise<StoredMessage[]> {
  if (!plan) return (await store.listMessages(sessionId, { toSeq: upToSeq })).map((entry) => entry.message);
  const head: TranscriptEntry[] = [];
  for (const seq of [plan.firstSeq, plan.summarySeq, ...plan.keptSeqs]) {
    if (seq === undefined) continue;
    const entry = await messageAt(store, sessionId, seq);
    if (entry) head.push(entry);
  }
  // Earlier summaries were merged into the current one; only the plan's summary is shown.
  const tail = (
    await store.listMessages(sessionId, { fromSeq: Math.max(plan.fromSeq, 0), toSeq: upToSeq })
  ).filter(
    (entry) => !head.some((kept) => kept.seq === entry.seq) && !entry.key.startsWith(KEY_PREFIX.summary),
  );
  const stubbed = new Set(plan.stubSeqs);
  const elided = new Set(plan.elideArgsSeqs);
  const calls = new Map<string, ToolCallPart>();
  for (const entry of [...head, ...tail]) {
    if (entry.message.role !== 'assistant') continue;
    for (const part of entry.message.content) if (part.type === 'tool-call') calls.set(part.toolCallId, part);
  }
  return [...head, ...tail].map((entry): StoredMessage => {
    const { message } = entry;
    if (message.role === 'tool' && stubbed.has(entry.seq)) {
      return {
        role: 'tool',
        // The stub's facts (size, lines, edges) are stored beside the result: no spool read per step.
        content: message.content.map((part) => {
          const facts = entry.meta?.tool;
          return renderStubbedToolResult(part, {
            args: calls.get(part.toolCallId)?.input ?? {},
            spoolId: facts?.spoolId,
            ...(facts?.spoolId !== undefined
              ? {
                  totalChars: facts.chars ?? facts.bytes,
                  totalLines: facts.lines,
                  firstLine: facts.firstLine,
                  lastLine: facts.lastLine,
                }
              : {}),
          });
        }),
      };
    }
    if (message.role === 'assistant' && elided.has(entry.seq)) {
      return {
        role: 'assistant',
        content: message.content.map((part) =>
          part.type === 'tool-call'
            ? { ...part, input: elideLargeArgs(part.input, LARGE_ARG_MIN_CHARS) }
            : part,
        ),
      };
    }
    return message;
  });
}
