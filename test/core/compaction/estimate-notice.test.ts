import { describe, expect, it } from 'vitest';
import { estimatePressure, tokensAppendedSince } from '../../../core/compaction/estimate';
import { compactionNotice, formatTokens } from '../../../core/compaction/notice';
import type { LedgerEntry } from '../../../core/ledger';

describe('estimatePressure', () => {
  it('is the last reported input plus the estimate of what was appended since', () => {
    expect(estimatePressure({ lastReportedInputTokens: 40_000, tokensAppendedSince: 2_500 })).toBe(42_500);
  });

  it('counts the messages after the last one the request saw', () => {
    const ledger: LedgerEntry[] = [
      { seq: 1, role: 'user', tokens: 100 },
      { seq: 2, role: 'assistant', tokens: 30 },
      { seq: 3, role: 'tool', tokens: 700 },
    ];
    expect(tokensAppendedSince(ledger, 1)).toBe(730);
    expect(tokensAppendedSince(ledger, 3)).toBe(0);
  });
});

describe('compactionNotice', () => {
  it('formats tokens short', () => {
    expect(formatTokens(950)).toBe('950');
    expect(formatTokens(42_300)).toBe('42k');
    expect(formatTokens(6_499)).toBe('6k');
  });

  it('says what a summary did', () => {
    expect(compactionNotice({ before: 42_000, after: 6_000, stubbed: 7, elided: 1, summarized: 38 })).toBe(
      'compacted 42k → 6k tokens (stubbed 7 tool outputs, elided arguments of 1 tool call, summarized 38 messages)',
    );
  });

  it('says when pruning was enough, and when it was forced', () => {
    expect(compactionNotice({ before: 90_000, after: 70_000, stubbed: 1, elided: 0, summarized: 0 })).toBe(
      'compacted 90k → 70k tokens (stubbed 1 tool output, no summary needed)',
    );
    expect(
      compactionNotice({ before: 99_000, after: 12_000, stubbed: 0, elided: 0, summarized: 5, forced: true }),
    ).toBe('compacted 99k → 12k tokens (forced, summarized 5 messages)');
  });

  it('names the stubs of the last exchanges, and says why it ended over the low-water mark', () => {
    const outcome = { before: 11_000, after: 7_000, stubbed: 3, tailStubbed: 2, elided: 0, summarized: 0 };
    expect(compactionNotice({ ...outcome, targetTokens: 8_000, shortOfTarget: 'never shown' })).toBe(
      'compacted 11k → 7k tokens (stubbed 3 tool outputs (2 of the last exchanges), no summary needed)',
    );
    expect(
      compactionNotice({ ...outcome, targetTokens: 6_000, shortOfTarget: 'system prompt and tools 5k' }),
    ).toBe(
      'compacted 11k → 7k tokens (stubbed 3 tool outputs (2 of the last exchanges), no summary needed); ' +
        'still over the 6k low-water mark: system prompt and tools 5k',
    );
  });
});

describe('tokensAppendedSince with folded ranges', () => {
  it('counts a range reaching past the covered seq whole', () => {
    const ledger: LedgerEntry[] = [
      { seq: 1, role: 'user', tokens: 100 },
      { seq: 2, role: 'range', tokens: 500, to: 9, count: 8 },
      { seq: 10, role: 'tool', tokens: 40 },
    ];
    expect(tokensAppendedSince(ledger, 9)).toBe(40);
    expect(tokensAppendedSince(ledger, 5)).toBe(540);
  });
});
