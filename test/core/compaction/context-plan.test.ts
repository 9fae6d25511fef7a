import { describe, expect, it } from 'vitest';
import {
  type ContextPlan,
  checkToolPairing,
  contextEntries,
  contextTokens,
  initialContextPlan,
} from '../../../core/context-plan';
import type { LedgerEntry } from '../../../core/ledger';
import { LedgerBuilder } from './ledger-fixtures';

const seqs = (entries: LedgerEntry[]) => entries.map((entry) => entry.seq);

describe('initialContextPlan', () => {
  it('shows everything from the first message on, with nothing pruned', () => {
    expect(initialContextPlan(1)).toEqual({
      firstSeq: 1,
      keptSeqs: [],
      fromSeq: 0,
      stubSeqs: [],
      elideArgsSeqs: [],
    });
  });
});

describe('contextEntries', () => {
  it('is the whole ledger in seq order before any summary', () => {
    const builder = new LedgerBuilder();
    builder.first();
    builder.exchange([{ tokens: 10 }, { tokens: 20 }]);
    builder.text();
    // Given out of order, as a ledger rebuilt from a query might be.
    const ledger = [...builder.entries].reverse();
    expect(seqs(contextEntries(ledger, initialContextPlan(1)))).toEqual([1, 2, 3, 4, 5]);
  });

  it('orders first, summary, kept, then the tail, although the summary was stored last', () => {
    const ledger: LedgerEntry[] = [
      { seq: 1, role: 'user', tokens: 10, kind: 'first' },
      { seq: 4, role: 'user', tokens: 10, kind: 'steering' },
      { seq: 9, role: 'assistant', tokens: 10, toolCallIds: ['a'] },
      { seq: 10, role: 'tool', tokens: 10, toolCallId: 'a' },
      { seq: 11, role: 'user', tokens: 10, kind: 'summary' },
      { seq: 12, role: 'assistant', tokens: 10 },
    ];
    const plan: ContextPlan = { ...initialContextPlan(1), summarySeq: 11, keptSeqs: [4], fromSeq: 9 };
    expect(seqs(contextEntries(ledger, plan))).toEqual([1, 11, 4, 9, 10, 12]);
  });

  it('leaves out messages before the tail and superseded summaries', () => {
    const ledger: LedgerEntry[] = [
      { seq: 1, role: 'user', tokens: 10, kind: 'first' },
      { seq: 2, role: 'assistant', tokens: 10 },
      { seq: 3, role: 'assistant', tokens: 10 },
      { seq: 4, role: 'user', tokens: 10, kind: 'summary' },
      { seq: 5, role: 'user', tokens: 10, kind: 'summary' },
    ];
    const plan: ContextPlan = { ...initialContextPlan(1), summarySeq: 5, fromSeq: 3 };
    expect(seqs(contextEntries(ledger, plan))).toEqual([1, 5, 3]);
  });

  it('skips references to messages the ledger no longer has', () => {
    const ledger: LedgerEntry[] = [{ seq: 1, role: 'user', tokens: 10, kind: 'first' }];
    const plan: ContextPlan = { ...initialContextPlan(1), summarySeq: 7, keptSeqs: [3], fromSeq: 5 };
    expect(seqs(contextEntries(ledger, plan))).toEqual([1]);
  });
});

describe('contextTokens', () => {
  const ledger: LedgerEntry[] = [
    { seq: 1, role: 'user', tokens: 100, kind: 'first' },
    { seq: 2, role: 'assistant', tokens: 5_060, toolCallIds: ['a'], largeArgsTokens: 5_000 },
    { seq: 3, role: 'tool', tokens: 9_000, toolCallId: 'a', spoolId: 1 },
    { seq: 4, role: 'assistant', tokens: 40 },
  ];

  it('sums the tokens of the messages in context', () => {
    expect(contextTokens(ledger, initialContextPlan(1), 150)).toBe(14_200);
  });

  it('counts a stub at the stub size and subtracts elided arguments', () => {
    const plan = { ...initialContextPlan(1), stubSeqs: [3], elideArgsSeqs: [2] };
    expect(contextTokens(ledger, plan, 150)).toBe(100 + 60 + 150 + 40);
  });

  it('counts nothing before the tail', () => {
    expect(contextTokens(ledger, { ...initialContextPlan(1), fromSeq: 4 }, 150)).toBe(140);
  });
});

describe('checkToolPairing', () => {
  const call = (seq: number, ...ids: string[]): LedgerEntry => ({
    seq,
    role: 'assistant',
    tokens: 1,
    toolCallIds: ids,
  });
  const result = (seq: number, id?: string): LedgerEntry => ({
    seq,
    role: 'tool',
    tokens: 1,
    ...(id ? { toolCallId: id } : {}),
  });
  const user = (seq: number): LedgerEntry => ({ seq, role: 'user', tokens: 1, kind: 'steering' });

  it('accepts calls answered in any order, user messages included', () => {
    expect(checkToolPairing([user(1), call(2, 'a', 'b'), result(3, 'b'), result(4, 'a'), user(5)])).toEqual(
      [],
    );
  });

  it('reports a result without its call before it', () => {
    expect(checkToolPairing([user(1), result(2, 'a'), call(3, 'a'), result(4, 'a')])).toEqual([
      'seq 2: tool result for a without its call before it',
    ]);
  });

  it('reports a call without a result', () => {
    expect(checkToolPairing([call(1, 'a', 'b'), result(2, 'a')])).toEqual([
      'seq 1: tool call b has no result',
    ]);
  });

  it('reports a second result for one call', () => {
    expect(checkToolPairing([call(1, 'a'), result(2, 'a'), result(3, 'a')])).toEqual([
      'seq 3: second result for tool call a',
    ]);
  });

  it('reports a result that comes after a later assistant message', () => {
    expect(checkToolPairing([call(1, 'a'), call(2, 'b'), result(3, 'b'), result(4, 'a')])).toEqual([
      'seq 4: result for a comes after a later assistant message',
    ]);
  });

  it('reports a reused call id and a result without a call id', () => {
    expect(checkToolPairing([call(1, 'a'), result(2, 'a'), call(3, 'a'), result(4)])).toEqual([
      'seq 3: tool call a was already made at seq 1',
      'seq 4: tool result without a call id',
    ]);
  });
});
