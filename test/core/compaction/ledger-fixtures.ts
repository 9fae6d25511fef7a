/**
 * Ledgers for the compaction tests: a small builder for hand-written cases and fast-check arbitraries
 * for generated ones (parallel calls, interrupted calls, spooled and unspooled outputs, steering).
 */
import fc from 'fast-check';
import type { LedgerEntry, UserMessageKind } from '../../../core/ledger';

/** One tool result of an exchange. */
export interface ResultSpec {
  tokens: number;
  spooled?: boolean;
  /** A goalrun-written "[not run to completion: …]" result (the call was interrupted). */
  interrupted?: boolean;
}

/** One thing that happens in a conversation. */
export type LedgerEvent =
  | { type: 'exchange'; results: ResultSpec[]; tokens?: number; largeArgsTokens?: number; reversed?: boolean }
  | { type: 'text'; tokens: number }
  | { type: 'user'; kind: UserMessageKind | undefined; tokens: number };

/** Builds a well-formed ledger, seq by seq, continuing from where it left off. */
export class LedgerBuilder {
  readonly entries: LedgerEntry[] = [];
  private seq = 0;
  private calls = 0;
  private spools = 0;

  /** Continues after an existing ledger (for successive rounds of compaction). */
  static after(ledger: LedgerEntry[], calls: number): LedgerBuilder {
    const builder = new LedgerBuilder();
    builder.seq = ledger.reduce((max, entry) => Math.max(max, entry.seq), 0);
    builder.calls = calls;
    builder.spools = calls;
    return builder;
  }

  get callCount(): number {
    return this.calls;
  }

  /** The next seq, e.g. for a summary entry. */
  nextSeq(): number {
    this.seq += 1;
    return this.seq;
  }

  first(tokens = 200): number {
    return this.push({ seq: this.nextSeq(), role: 'user', tokens, kind: 'first' });
  }

  user(kind: UserMessageKind | undefined, tokens = 50): number {
    return this.push({ seq: this.nextSeq(), role: 'user', tokens, ...(kind ? { kind } : {}) });
  }

  text(tokens = 80): number {
    return this.push({ seq: this.nextSeq(), role: 'assistant', tokens });
  }

  /** An assistant message with one call per result, then the results; returns the assistant's seq. */
  exchange(
    results: ResultSpec[],
    options: { tokens?: number; largeArgsTokens?: number; reversed?: boolean } = {},
  ) {
    const ids = results.map(() => `call-${++this.calls}`);
    const assistant: LedgerEntry = {
      seq: this.nextSeq(),
      role: 'assistant',
      tokens: (options.tokens ?? 60) + (options.largeArgsTokens ?? 0),
      toolCallIds: ids,
      ...(options.largeArgsTokens ? { largeArgsTokens: options.largeArgsTokens } : {}),
    };
    this.push(assistant);
    const order = results.map((result, index) => ({ result, id: ids[index] }));
    // Interrupted calls are answered by goalrun after the ones that ran, as on resume.
    const ran = order.filter((item) => !item.result.interrupted);
    const interrupted = order.filter((item) => item.result.interrupted);
    if (options.reversed) ran.reverse();
    const resultSeqs = [...ran, ...interrupted].map(({ result, id }) =>
      this.push({
        seq: this.nextSeq(),
        role: 'tool',
        tokens: result.interrupted ? 12 : result.tokens,
        toolCallId: id,
        toolName: 'bash',
        ok: !result.interrupted,
        bytes: (result.interrupted ? 12 : result.tokens) * 4,
        ...(result.spooled && !result.interrupted ? { spoolId: ++this.spools } : {}),
      }),
    );
    if (interrupted.length > 0) this.user('resume', 120);
    return { assistantSeq: assistant.seq, resultSeqs };
  }

  apply(event: LedgerEvent): void {
    if (event.type === 'exchange') this.exchange(event.results, event);
    else if (event.type === 'text') this.text(event.tokens);
    else this.user(event.kind, event.tokens);
  }

  private push(entry: LedgerEntry): number {
    this.entries.push(entry);
    return entry.seq;
  }
}

/** A ledger built from events after a first message. */
export function buildLedger(events: LedgerEvent[], firstTokens = 200): LedgerEntry[] {
  const builder = new LedgerBuilder();
  builder.first(firstTokens);
  for (const event of events) builder.apply(event);
  return builder.entries;
}

// Sizes: mostly small outputs, some just over the spool threshold, some very large.
const resultTokensArb = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 5, max: 500 }) },
  { weight: 3, arbitrary: fc.integer({ min: 501, max: 4_000 }) },
  { weight: 2, arbitrary: fc.integer({ min: 4_001, max: 40_000 }) },
);

/** A result: outputs over ~500 tokens are usually spooled (a failed spool write leaves one without). */
const resultArb: fc.Arbitrary<ResultSpec> = fc
  .record({ tokens: resultTokensArb, spoolFailed: fc.integer({ min: 0, max: 4 }).map((n) => n === 0) })
  .map(({ tokens, spoolFailed }) => ({ tokens, spooled: tokens > 500 && !spoolFailed }));

/**
 * A batch of calls, parallel ones common. Calls run one after another, so an interruption (cancel, crash,
 * time limit) leaves the first few answered and the rest answered by goalrun as not run to completion.
 */
export const exchangeArb: fc.Arbitrary<LedgerEvent> = fc
  .record({
    results: fc.array(resultArb, { minLength: 1, maxLength: 4 }),
    interruptAt: fc.oneof(
      { weight: 6, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.nat({ max: 3 }) },
    ),
    largeArgsTokens: fc.oneof(
      { weight: 4, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }) },
    ),
    reversed: fc.boolean(),
  })
  .map(({ results, interruptAt, largeArgsTokens, reversed }) => ({
    type: 'exchange' as const,
    results: results.map((result, index) => ({
      ...result,
      interrupted: interruptAt !== undefined && index >= interruptAt,
    })),
    largeArgsTokens,
    reversed,
  }));

const userKindArb = fc.constantFrom<UserMessageKind | undefined>(
  'steering',
  'continuation',
  'resume',
  undefined,
);

/** One event, exchanges most often. */
export const eventArb: fc.Arbitrary<LedgerEvent> = fc.oneof(
  { weight: 6, arbitrary: exchangeArb },
  {
    weight: 1,
    arbitrary: fc.record({ type: fc.constant('text' as const), tokens: fc.integer({ min: 5, max: 2_000 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('user' as const),
      kind: userKindArb,
      tokens: fc.integer({ min: 5, max: 3_000 }),
    }),
  },
);

/** A model window, from tiny to large, so the protected window ranges from a few entries to 40k tokens. */
export const windowArb = fc.constantFrom(8_000, 32_000, 128_000, 200_000, 400_000, 1_000_000);
