/** Derives the ledger entry of a stored message: the small facts compaction plans with. */
import type { LedgerEntry, UserMessageKind } from './ledger';
import { type StoredMessage, toolCallsOf } from './messages';
import { FIRST_MESSAGE_KEY, KEY_PREFIX } from './store-keys';
import { estimateTokens } from './tokens';

/** A string argument at least this long counts as "very large" (e.g. a whole file for file-write). */
export const LARGE_ARG_MIN_CHARS = 4_000;

/** Message keys by prefix → who wrote the user message. */
const USER_KINDS: Array<[prefix: string, kind: UserMessageKind]> = [
  [FIRST_MESSAGE_KEY, 'first'],
  [KEY_PREFIX.continuation, 'continuation'],
  [KEY_PREFIX.resume, 'resume'],
  [KEY_PREFIX.summary, 'summary'],
  [KEY_PREFIX.steering, 'steering'],
  // goalrun's own notes (compaction notices, failure notes) restate nothing the user asked for.
  [KEY_PREFIX.notice, 'continuation'],
];

/** Who wrote a user message, from its store key. */
export function userKindOf(key: string): UserMessageKind {
  return USER_KINDS.find(([prefix]) => key.startsWith(prefix))?.[1] ?? 'steering';
}

/**
 * What one image (`--image`) is counted as: about the most a provider bills for one (Anthropic's
 * ~1,600 tokens for an image at its largest size; OpenAI's high detail is less). Its reference in the
 * message is only a few dozen characters.
 */
export const IMAGE_TOKEN_ESTIMATE = 1_600;

/** Estimated tokens of a message as the model sees it. */
export function messageTokens(message: StoredMessage): number {
  const images = message.role === 'user' ? message.content.filter((part) => part.type === 'image').length : 0;
  return estimateTokens(JSON.stringify(message.content)) + images * IMAGE_TOKEN_ESTIMATE;
}

/** Tokens of string arguments over LARGE_ARG_MIN_CHARS in an assistant message's tool calls. */
export function largeArgsTokens(message: StoredMessage): number {
  let total = 0;
  const visit = (value: unknown) => {
    if (typeof value === 'string') {
      if (value.length >= LARGE_ARG_MIN_CHARS) total += estimateTokens(value);
    } else if (value && typeof value === 'object') {
      for (const child of Object.values(value)) visit(child);
    }
  };
  for (const call of toolCallsOf(message)) visit(call.input);
  return total;
}

/** The ledger entry of a stored message; tool results may add spool facts known to the caller. */
export function ledgerEntryFor(
  seq: number,
  key: string,
  message: StoredMessage,
  toolFacts: { spoolId?: number; bytes?: number; ok?: boolean } = {},
): LedgerEntry {
  const tokens = messageTokens(message);
  if (message.role === 'user') return { seq, role: 'user', tokens, kind: userKindOf(key) };
  if (message.role === 'assistant') {
    const toolCallIds = toolCallsOf(message).map((call) => call.toolCallId);
    const large = largeArgsTokens(message);
    return {
      seq,
      role: 'assistant',
      tokens,
      ...(toolCallIds.length > 0 ? { toolCallIds } : {}),
      ...(large > 0 ? { largeArgsTokens: large } : {}),
    };
  }
  const part = message.content[0];
  return {
    seq,
    role: 'tool',
    tokens,
    toolCallId: part?.toolCallId,
    toolName: part?.toolName,
    ok: toolFacts.ok ?? part?.output.type === 'text',
    ...(toolFacts.spoolId !== undefined ? { spoolId: toolFacts.spoolId } : {}),
    ...(toolFacts.bytes !== undefined ? { bytes: toolFacts.bytes } : {}),
  };
}
