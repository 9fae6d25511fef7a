/**
 * Writing a message or a goal-state change together with its effects (state, events, the paid call
 * a message answers): as one SQL statement when the state write allows it (effects-write.ts), else in
 * a transaction of the shared writes (message-writes.ts). Either way all of it commits or none does.
 */
import type { StoredMessage } from '../core/messages';
import type { StateWrite } from '../core/state-write';
import { canWriteInOneStatement, insertMessageWithEffects, writeStateWithEvents } from './effects-write';
import { applyGoalStateWrite, existingSeq, insertEvent, insertMessage } from './message-writes';
import { recordPaidCall } from './paid-calls';
import { jsonText, toJson } from './rows';
import type { SqlClient } from './sql';
import type { MessageWriteOptions } from './types';

/** Appends a message once under its key, with the state write and events of `options`. */
export async function appendMessage(
  client: SqlClient,
  sessionId: string,
  key: string,
  message: StoredMessage,
  options: MessageWriteOptions,
): Promise<{ seq: number; created: boolean }> {
  if (!options.state && !options.event && !options.paidCall) {
    return insertMessage(client, sessionId, key, message, options.meta);
  }
  const events = [options.event ?? []].flat();
  if (canWriteInOneStatement(options.state)) {
    const { seq } = await insertMessageWithEffects(
      client,
      {
        sessionId,
        key,
        role: message.role,
        content: jsonText(message.content),
        meta: toJson(options.meta),
      },
      options.state,
      events,
      options.paidCall,
    );
    if (seq !== null) return { seq, created: true };
    // The key was taken. A separate statement sees a racing insert that committed meanwhile.
    return { seq: await existingSeq(client, sessionId, key), created: false };
  }
  // The message, the state that accounts for it and its event commit together or not at all.
  return client.transaction(async (tx) => {
    const result = await insertMessage(tx, sessionId, key, message, options.meta);
    if (options.state) await applyGoalStateWrite(tx, sessionId, options.state);
    for (const event of [options.event ?? []].flat()) await insertEvent(tx, sessionId, event);
    if (options.paidCall) await recordPaidCall(tx, options.paidCall);
    return result;
  });
}

/** Applies a change to the session's saved goal state and logs its events; throws for an unknown session. */
export async function writeGoalState(
  client: SqlClient,
  sessionId: string,
  write: StateWrite,
  event?: MessageWriteOptions['event'],
): Promise<void> {
  if (canWriteInOneStatement(write)) {
    const changed = await writeStateWithEvents(client, sessionId, write, [event ?? []].flat());
    if (changed === 0) throw new Error(`session ${sessionId} is not in the store`);
    return;
  }
  await client.transaction(async (tx) => {
    await applyGoalStateWrite(tx, sessionId, write);
    for (const each of [event ?? []].flat()) await insertEvent(tx, sessionId, each);
  });
}
