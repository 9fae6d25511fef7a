/**
 * The one-line transcript notice of a compaction (spec S-AUTO: "compacted 42k → 6k tokens").
 */

/** Tokens in the short form of notices: exact below a thousand, else whole thousands ("42k"). */
export function formatTokens(tokens: number): string {
  return tokens < 1_000 ? `${Math.round(tokens)}` : `${Math.round(tokens / 1_000)}k`;
}

/** What a compaction did, for its notice. */
export interface CompactionOutcome {
  before: number;
  after: number;
  /** Tool outputs newly replaced by stubs (those of the last exchanges included). */
  stubbed: number;
  /** Of those, outputs of the last exchanges, normally kept verbatim. */
  tailStubbed?: number;
  /** Tool calls whose large arguments were newly elided. */
  elided: number;
  /** Messages replaced by the summary; 0 when pruning was enough. */
  summarized: number;
  forced?: boolean;
  /** The low-water mark, when the compaction ended over it… */
  targetTokens?: number;
  /** …and why it could not get under it. */
  shortOfTarget?: string;
}

/** A count with its noun, pluralized the simple way. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * The notice, e.g. `compacted 42k → 6k tokens (stubbed 7 tool outputs, summarized 38 messages)`, with
 * the reason appended when the compaction could not reach the low-water mark.
 */
export function compactionNotice(outcome: CompactionOutcome): string {
  const parts: string[] = [];
  if (outcome.forced) parts.push('forced');
  if (outcome.stubbed > 0) {
    const inTail = outcome.tailStubbed ? ` (${outcome.tailStubbed} of the last exchanges)` : '';
    parts.push(`stubbed ${count(outcome.stubbed, 'tool output')}${inTail}`);
  }
  if (outcome.elided > 0) parts.push(`elided arguments of ${count(outcome.elided, 'tool call')}`);
  parts.push(
    outcome.summarized > 0 ? `summarized ${count(outcome.summarized, 'message')}` : 'no summary needed',
  );
  const line = `compacted ${formatTokens(outcome.before)} → ${formatTokens(outcome.after)} tokens (${parts.join(', ')})`;
  if (outcome.targetTokens === undefined || outcome.after < outcome.targetTokens || !outcome.shortOfTarget) {
    return line;
  }
  return `${line}; still over the ${formatTokens(outcome.targetTokens)} low-water mark: ${outcome.shortOfTarget}`;
}
