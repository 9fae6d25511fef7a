/**
 * Builds what the model sees from the transcript and the workflow's context plan: the first
 * message, the summary, kept user messages, then the verbatim tail with pruned outputs as stubs.
 */
import { elideLargeArgs, renderStubbedToolResult } from '../core/compaction/stub';
import type { ContextPlan } from '../core/context-plan';
import { LARGE_ARG_MIN_CHARS } from '../core/ledger-entry';
import type { StoredMessage, ToolCallPart } from '../core/messages';
import { KEY_PREFIX } from '../core/store-keys';
import type { SessionStore } from '../store/types';

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
  return (await buildPlannedContext(store, sessionId, upToSeq, plan)).messages;
}

/** The messages of a model request, and how many of them lead it unchanged until the next compaction. */
export interface PlannedContext {
  messages: StoredMessage[];
  /**
   * The head: the first message, the summary and the kept messages, which only a compaction changes
   * (the tail behind it may be pruned to stubs). Its end is a prompt-cache breakpoint. Without a plan
   * the whole transcript is verbatim and the head is the first message.
   */
  headCount: number;
}

/** Like buildContext, and says where the stable head ends. */
export async function buildPlannedContext(
  store: SessionStore,
  sessionId: string,
  upToSeq: number,
  plan?: ContextPlan,
): Promise<PlannedContext> {
  if (!plan) {
    const messages = (await store.listMessages(sessionId, { toSeq: upToSeq })).map((entry) => entry.message);
    return { messages, headCount: Math.min(1, messages.length) };
  }
  const headSeqs = [plan.firstSeq, plan.summarySeq, ...plan.keptSeqs].filter(
    (seq): seq is number => seq !== undefined,
  );
  const fromSeq = Math.max(plan.fromSeq, 0);
  // One read for the head (first message, summary, kept messages) and the verbatim tail.
  const rows = await store.listMessagesForContext(sessionId, headSeqs, fromSeq, upToSeq);
  const bySeq = new Map(rows.map((entry) => [entry.seq, entry]));
  const head = headSeqs.flatMap((seq) => bySeq.get(seq) ?? []);
  const inHead = new Set(head.map((entry) => entry.seq));
  // Earlier summaries were merged into the current one; only the plan's summary is shown.
  const tail = rows.filter(
    (entry) =>
      entry.seq >= fromSeq &&
      entry.seq <= upToSeq &&
      !inHead.has(entry.seq) &&
      !entry.key.startsWith(KEY_PREFIX.summary),
  );
  const stubbed = new Set(plan.stubSeqs);
  const elided = new Set(plan.elideArgsSeqs);
  const calls = new Map<string, ToolCallPart>();
  for (const entry of [...head, ...tail]) {
    if (entry.message.role !== 'assistant') continue;
    for (const part of entry.message.content) if (part.type === 'tool-call') calls.set(part.toolCallId, part);
  }
  const messages = [...head, ...tail].map((entry): StoredMessage => {
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
  return { messages, headCount: head.length };
}
