import { describe, expect, it } from 'vitest';
import { applySummary, planSummary, summaryFloorTokens } from '../../../core/compaction/summary-span';
import { STUB_TOKENS, SUMMARY_TOKENS_ESTIMATE } from '../../../core/compaction/thresholds';
import { checkToolPairing, contextEntries, initialContextPlan } from '../../../core/context-plan';
import type { LedgerEntry } from '../../../core/ledger';
import { LedgerBuilder } from './ledger-fixtures';

const one = [{ tokens: 100 }];
const seqs = (entries: LedgerEntry[]) => entries.map((entry) => entry.seq);

/** Stores a summary after everything else, as the summarize activity does. */
function summaryOf(builder: LedgerBuilder, tokens = 400): LedgerEntry {
  return { seq: builder.nextSeq(), role: 'user', tokens, kind: 'summary' };
}

describe('planSummary', () => {
  it('summarizes everything between the first message and the last three exchanges', () => {
    const builder = new LedgerBuilder();
    builder.first();
    const e1 = builder.exchange(one);
    const text = builder.text();
    const e2 = builder.exchange(one);
    const e3 = builder.exchange(one);
    builder.exchange(one);
    builder.exchange(one);
    const closing = builder.text();
    const span = planSummary(builder.entries, initialContextPlan(1), {});
    expect(span).toEqual({
      spanSeqs: [e1.assistantSeq, ...e1.resultSeqs, text, e2.assistantSeq, ...e2.resultSeqs],
      keptSeqs: [],
      tailFromSeq: e3.assistantSeq,
    });
    expect(closing).toBeGreaterThan(e3.assistantSeq);
  });

  it('keeps a parallel batch whole at the tail boundary', () => {
    const builder = new LedgerBuilder();
    builder.first();
    builder.exchange(one);
    const batch = builder.exchange([{ tokens: 10 }, { tokens: 20 }, { tokens: 30 }, { tokens: 40 }]);
    builder.exchange(one);
    builder.exchange(one);
    const span = planSummary(builder.entries, initialContextPlan(1), {});
    expect(span?.tailFromSeq).toBe(batch.assistantSeq);
    expect(span?.spanSeqs).not.toContain(batch.resultSeqs[0]);
  });

  it('keeps two exchanges when forced', () => {
    const builder = new LedgerBuilder();
    builder.first();
    builder.exchange(one);
    const e2 = builder.exchange(one);
    const e3 = builder.exchange(one);
    builder.exchange(one);
    const span = planSummary(builder.entries, initialContextPlan(1), { forced: true });
    expect(span?.tailFromSeq).toBe(e3.assistantSeq);
    expect(span?.spanSeqs).toContain(e2.assistantSeq);
  });

  it('keeps every steering message of the span, not goalrun-written ones', () => {
    const builder = new LedgerBuilder();
    builder.first();
    const steering = [builder.user('steering')];
    builder.exchange(one);
    steering.push(builder.user('steering'));
    builder.user('continuation');
    steering.push(builder.user('steering'));
    builder.user('resume');
    builder.user(undefined);
    steering.push(builder.user('steering'));
    for (let i = 0; i < 3; i++) builder.exchange(one);
    for (const forced of [false, true]) {
      const span = planSummary(builder.entries, initialContextPlan(1), { forced });
      expect(span?.keptSeqs).toEqual(steering);
      expect(span?.spanSeqs).toEqual(expect.arrayContaining(steering));
    }
  });

  it('keeps only the latest three steering messages for executions started before every one was kept', () => {
    const builder = new LedgerBuilder();
    builder.first();
    const steering = [1, 2, 3, 4].map(() => builder.user('steering'));
    for (let i = 0; i < 4; i++) builder.exchange(one);
    const span = planSummary(builder.entries, initialContextPlan(1), { steering: { latestOnly: true } });
    expect(span?.keptSeqs).toEqual(steering.slice(1));
  });

  it('past the steering budget, summarizes the oldest steering messages but always keeps the latest three', () => {
    const builder = new LedgerBuilder();
    builder.first();
    const steering = [1, 2, 3, 4, 5, 6].map(() => builder.user('steering', 8_000));
    for (let i = 0; i < 4; i++) builder.exchange(one);
    const plan = initialContextPlan(1);
    // Room for four: the latest three and one more.
    expect(planSummary(builder.entries, plan, { steering: { budgetTokens: 32_000 } })?.keptSeqs).toEqual(
      steering.slice(2),
    );
    // A budget smaller than the latest three does not drop them.
    expect(planSummary(builder.entries, plan, { steering: { budgetTokens: 1_000 } })?.keptSeqs).toEqual(
      steering.slice(3),
    );
    expect(planSummary(builder.entries, plan, { steering: { budgetTokens: 48_000 } })?.keptSeqs).toEqual(
      steering,
    );
  });

  it('returns null when the tail is all there is', () => {
    const builder = new LedgerBuilder();
    builder.first();
    for (let i = 0; i < 3; i++) builder.exchange(one);
    expect(planSummary(builder.entries, initialContextPlan(1), {})).toBeNull();
  });

  it('returns null when the span holds only messages that would be kept again', () => {
    const builder = new LedgerBuilder();
    builder.first();
    builder.user('steering');
    builder.user('steering');
    for (let i = 0; i < 3; i++) builder.exchange(one);
    expect(planSummary(builder.entries, initialContextPlan(1), {})).toBeNull();
  });

  it('summarizes plain messages before the first of fewer than three exchanges', () => {
    const builder = new LedgerBuilder();
    builder.first();
    const text = builder.text();
    const continuation = builder.user('continuation');
    const e1 = builder.exchange(one);
    const span = planSummary(builder.entries, initialContextPlan(1), {});
    expect(span).toEqual({ spanSeqs: [text, continuation], keptSeqs: [], tailFromSeq: e1.assistantSeq });
  });

  it('summarizes everything after the first message when there is no tool exchange at all', () => {
    const builder = new LedgerBuilder();
    builder.first();
    const texts = [builder.text(), builder.user('continuation'), builder.text()];
    const span = planSummary(builder.entries, initialContextPlan(1), {});
    expect(span).toEqual({ spanSeqs: texts, keptSeqs: [], tailFromSeq: texts[2] + 1 });
  });

  it('widens the tail rather than orphan a result stored after a later call', () => {
    const ledger: LedgerEntry[] = [
      { seq: 1, role: 'user', tokens: 10, kind: 'first' },
      { seq: 2, role: 'assistant', tokens: 10 },
      { seq: 3, role: 'assistant', tokens: 10, toolCallIds: ['late'] },
      { seq: 4, role: 'assistant', tokens: 10, toolCallIds: ['a'] },
      { seq: 5, role: 'tool', tokens: 10, toolCallId: 'a' },
      { seq: 6, role: 'assistant', tokens: 10, toolCallIds: ['b'] },
      { seq: 7, role: 'tool', tokens: 10, toolCallId: 'b' },
      { seq: 8, role: 'tool', tokens: 10, toolCallId: 'late' },
    ];
    // Without widening the tail would start at 4 (the second latest exchange) and 8 would be orphaned.
    const span = planSummary(ledger, initialContextPlan(1), { forced: true });
    expect(span).toEqual({ spanSeqs: [2], keptSeqs: [], tailFromSeq: 3 });
  });
});

describe('applySummary', () => {
  it('keeps the first message, the summary, the kept messages and the tail', () => {
    const builder = new LedgerBuilder();
    builder.first();
    const kept = builder.user('steering');
    const e1 = builder.exchange([{ tokens: 9_000, spooled: true }]);
    const tail = [builder.exchange(one), builder.exchange(one), builder.exchange(one)];
    const plan = { ...initialContextPlan(1), stubSeqs: [e1.resultSeqs[0]], elideArgsSeqs: [e1.assistantSeq] };
    const span = planSummary(builder.entries, plan, {});
    expect(span).not.toBeNull();
    const summary = summaryOf(builder);
    const after = applySummary(builder.entries, plan, summary, span!);
    const tailSeqs = tail.flatMap((exchange) => [exchange.assistantSeq, ...exchange.resultSeqs]);
    expect(seqs(after.ledger)).toEqual([1, kept, ...tailSeqs, summary.seq]);
    expect(after.plan).toEqual({
      firstSeq: 1,
      summarySeq: summary.seq,
      keptSeqs: [kept],
      fromSeq: tail[0].assistantSeq,
      stubSeqs: [],
      elideArgsSeqs: [],
    });
    expect(seqs(contextEntries(after.ledger, after.plan))).toEqual([1, summary.seq, kept, ...tailSeqs]);
    expect(checkToolPairing(contextEntries(after.ledger, after.plan))).toEqual([]);
  });

  it('keeps stubs inside the new tail', () => {
    const builder = new LedgerBuilder();
    builder.first();
    builder.exchange(one);
    builder.exchange(one);
    const stubbed = builder.exchange([{ tokens: 9_000, spooled: true }]);
    builder.exchange(one);
    const plan = { ...initialContextPlan(1), stubSeqs: [stubbed.resultSeqs[0]] };
    const span = planSummary(builder.entries, plan, {});
    const after = applySummary(builder.entries, plan, summaryOf(builder), span!);
    expect(after.plan.stubSeqs).toEqual(stubbed.resultSeqs);
  });

  it('merges the earlier summary: a second compaction drops it and keeps only the new one', () => {
    const builder = new LedgerBuilder();
    builder.first();
    const steering = builder.user('steering');
    for (let i = 0; i < 4; i++) builder.exchange(one);
    let state = { ledger: builder.entries, plan: initialContextPlan(1) };
    const first = summaryOf(builder);
    state = applySummary(state.ledger, state.plan, first, planSummary(state.ledger, state.plan, {})!);
    const more = LedgerBuilder.after(state.ledger, builder.callCount);
    for (let i = 0; i < 2; i++) more.exchange(one);
    const ledger = [...state.ledger, ...more.entries];
    const span = planSummary(ledger, state.plan, {});
    expect(span?.previousSummarySeq).toBe(first.seq);
    expect(span?.spanSeqs).not.toContain(first.seq);
    // The kept steering message is in the new span and is kept again.
    expect(span?.keptSeqs).toEqual([steering]);
    const second = summaryOf(more);
    const after = applySummary(ledger, state.plan, second, span!);
    expect(after.ledger.filter((entry) => entry.kind === 'summary')).toEqual([second]);
    expect(seqs(contextEntries(after.ledger, after.plan)).slice(0, 3)).toEqual([1, second.seq, steering]);
  });

  it('marks the stored summary as a summary and is idempotent', () => {
    const builder = new LedgerBuilder();
    builder.first();
    for (let i = 0; i < 4; i++) builder.exchange(one);
    const plan = initialContextPlan(1);
    const span = planSummary(builder.entries, plan, {})!;
    const summary = { seq: builder.nextSeq(), role: 'user' as const, tokens: 300 };
    const once = applySummary(builder.entries, plan, summary, span);
    expect(once.ledger.at(-1)).toEqual({ ...summary, kind: 'summary' });
    expect(applySummary(once.ledger, plan, summary, span)).toEqual(once);
  });
});

describe('summaryFloorTokens', () => {
  it('is what stays after a summary, plus a typical summary', () => {
    const builder = new LedgerBuilder();
    builder.first(200);
    builder.exchange([{ tokens: 50_000 }]);
    for (let i = 0; i < 3; i++) builder.exchange([{ tokens: 1_000 }]);
    const floor = summaryFloorTokens(builder.entries, initialContextPlan(1), { fixedTokens: 5_000 });
    expect(floor).toBe(5_000 + 200 + 3 * (60 + 1_000) + SUMMARY_TOKENS_ESTIMATE);
  });

  it('is the current estimate when there is nothing to summarize', () => {
    const builder = new LedgerBuilder();
    builder.first(200);
    const e1 = builder.exchange([{ tokens: 9_000, spooled: true }]);
    const plan = { ...initialContextPlan(1), stubSeqs: e1.resultSeqs };
    expect(summaryFloorTokens(builder.entries, plan, { fixedTokens: 0 })).toBe(200 + 60 + STUB_TOKENS);
  });
});
