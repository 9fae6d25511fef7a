/** Reads what a goal's tools answered, as the model saw it, from the session store. */
import type { SessionStore } from '../../store/types';

/** One stored tool result. */
export interface StoredToolResult {
  seq: number;
  toolCallId: string;
  toolName: string;
  ok: boolean;
  text: string;
}

/** Every tool result of a session, in transcript order. */
export async function toolResultsOf(store: SessionStore, sessionId: string): Promise<StoredToolResult[]> {
  const results: StoredToolResult[] = [];
  for (const entry of await store.listMessages(sessionId)) {
    if (entry.message.role !== 'tool') continue;
    for (const part of entry.message.content) {
      results.push({
        seq: entry.seq,
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        ok: part.output.type === 'text',
        text: String(part.output.value),
      });
    }
  }
  return results;
}
