/**
 * Tool-call ids made unique in a session before the model's answer is stored: a misbehaving model
 * (or a script) may repeat an id, and two calls with one id would share one stored result. A repeat
 * becomes `id~2`, `id~3`, … (the first free one).
 */
import type { ToolCallPart } from '../core/messages';
import { storeKeys } from '../core/store-keys';
import type { SessionStore } from '../store/types';

/** The tool calls with ids unique in the session (calls already unique come back as they were). */
export async function uniqueToolCalls(
  store: SessionStore,
  sessionId: string,
  calls: ToolCallPart[],
): Promise<ToolCallPart[]> {
  if (calls.length === 0) return calls;
  // One look-up for the ids as given; a repeat is rare, and then each candidate is checked.
  const answered = await store.existingMessageKeys(
    sessionId,
    calls.map((call) => storeKeys.toolResult(call.toolCallId || 'call')),
  );
  const taken = async (id: string) =>
    answered.has(storeKeys.toolResult(id)) ||
    (await store.getMessageByKey(sessionId, storeKeys.toolResult(id))) !== null;
  const seen = new Set<string>();
  const unique: ToolCallPart[] = [];
  for (const call of calls) {
    const base = call.toolCallId || 'call';
    let id = base;
    for (
      let n = 2;
      seen.has(id) || (id === base ? answered.has(storeKeys.toolResult(id)) : await taken(id));
      n++
    ) {
      id = `${base}~${n}`;
    }
    seen.add(id);
    unique.push(id === call.toolCallId ? call : { ...call, toolCallId: id });
  }
  return unique;
}
