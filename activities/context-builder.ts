/**
 * Builds what the model sees from the transcript and the workflow's context plan: the first
 * message, the summary, kept user messages, then the verbatim tail with pruned outputs as stubs.
 */
import { elideLargeArgs, renderStubbedToolResult } from '../core/compaction/stub';
import type { ContextPlan } from '../core/context-plan';
import { LARGE_ARG_MIN_CHARS } from '../core/ledger-entry';
import type { StoredMessage, ToolCallPart, TranscriptEntry } from '../core/messages';
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

/** Facts about a tool output that the stub needs and the stored (truncated) result may lack. */
async function toolFacts(
  store: SessionStore,
  sessionId: string,
): Promise<Map<string, { bytes?: number; spoolId?: number }>> {
  const facts = new Map<string, { bytes?: number; spoolId?: number }>();
  for (const event of await store.listEvents(sessionId)) {
    if (event.kind !== 'tool') continue;
    const data = event.data as { toolCallId?: string; bytes?: number; spoolId?: number };
    if (data.toolCallId) facts.set(data.toolCallId, { bytes: data.bytes, spoolId: data.spoolId });
  }
  return facts;
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
  ).filter((entry) => !head.some((kept) => kept.seq === entry.seq) && !entry.key.startsWith('summary:'));
  const stubbed = new Set(plan.stubSeqs);
  const elided = new Set(plan.elideArgsSeqs);
  const calls = new Map<string, ToolCallPart>();
  for (const entry of [...head, ...tail]) {
    if (entry.message.role !== 'assistant') continue;
    for (const part of entry.message.content) if (part.type === 'tool-call') calls.set(part.toolCallId, part);
  }
  const facts = stubbed.size > 0 ? await toolFacts(store, sessionId) : new Map();
  // Stubs describe the full output (size, line count, last line), so spooled ones are read whole.
  const full = new Map<string, string>();
  for (const entry of tail) {
    if (entry.message.role !== 'tool' || !stubbed.has(entry.seq)) continue;
    for (const part of entry.message.content) {
      const spoolId = facts.get(part.toolCallId)?.spoolId;
      if (spoolId === undefined) continue;
      const size = (await store.readSpool(sessionId, spoolId, 0, 1))?.size ?? 0;
      const page = await store.readSpool(sessionId, spoolId, 0, Math.max(size, 1));
      if (page) full.set(part.toolCallId, page.content);
    }
  }
  return [...head, ...tail].map((entry): StoredMessage => {
    const { message } = entry;
    if (message.role === 'tool' && stubbed.has(entry.seq)) {
      return {
        role: 'tool',
        content: message.content.map((part) => {
          const spooled = full.get(part.toolCallId);
          const source =
            spooled === undefined ? part : { ...part, output: { ...part.output, value: spooled } };
          return renderStubbedToolResult(source, {
            args: calls.get(part.toolCallId)?.input ?? {},
            spoolId: facts.get(part.toolCallId)?.spoolId,
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
