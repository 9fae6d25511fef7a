/**
 * What one compaction decides (issue 9.2, 9.3): it aims below the low-water mark, stubs the verbatim tail
 * (oldest first, the unseen newest exchange last) when the tail alone keeps it over the mark instead of
 * summarizing again, summarizes only a span worth a call, and the legacy rules stay as they were.
 */
import { describe, expect, it } from 'vitest';
import {
  type CompactionInput,
  compactionFloorTokens,
  completeSummary,
  planCompaction,
} from '../../../core/compaction/compaction-plan';
import { prunedContextTokens } from '../../../core/compaction/prune';
import { shortfallReason } from '../../../core/compaction/shortfall';
import { summaryFloorTokens } from '../../../core/compaction/summary-span';
import type { CompactionTargets } from '../../../core/compaction/targets';
import { STUB_TOKENS } from '../../../core/compaction/thresholds';
import { checkToolPairing, contextEntries, initialContextPlan } from '../../../core/context-plan';
import type { LedgerEntry } from '../../../core/ledger';
import { LedgerBuilder } from './ledger-fixtures';

/** A 16k window: 12k usable, threshold 10.2k, low-water mark 6k; the protected recent window is 3.2k. */
const TARGETS: CompactionTargets = {
  windowTokens: 16_000,
  usableInputTokens: 12_000,
  thresholdTokens: 10_200,
  targetTokens: 6_000,
  hardLimitTokens: 12_000,
};
const FIXED = 1_500;

/** A conversation in input form: its estimate is what the ledger shows plus the fixed part. */
function inputOf(ledger: LedgerEntry[], overrides: Partial<CompactionInput> = {}): CompactionInput {
  const plan = overrides.plan ?? initialContextPlan(1);
  return {
    ledger,
    plan,
    before: FIXED + prunedContextTokens(ledger, plan),
    targets: TARGETS,
    fixedTokens: FIXED,
    mode: {},
    ...overrides,
  };
}

describe('planCompaction', () => {
  it('keeps every steering message verbatim in a summary, manual or forced, within a quarter of the usable input', () => {
    const builder = new LedgerBuilder();
    builder.first(300);
    const steering: number[] = [];
    for (let i = 0; i < 6; i++) {
      steering.push(builder.user('steering', 200));
      builder.exchange([{ tokens: 1_500 }]);
    }
    for (let i = 0; i < 3; i++) builder.exchange([{ tokens: 200 }]);
    for (const mode of [{ manual: true }, { forced: true }, {}]) {
      const result = planCompaction(inputOf(builder.entries, { mode }));
      expect(result.summary?.keptSeqs, JSON.stringify(mode)).toEqual(steering);
    }
    // Runs started before every message was kept replay with the latest three.
    const legacy = planCompaction(
      inputOf(builder.entries, { mode: { manual: true, latestSteeringOnly: true } }),
    );
    expect(legacy.summary?.keptSeqs).toEqual(steering.slice(-3));
    // A quarter of 12k usable is 3k: the six 200-token messages fit, fifteen 1k ones do not.
    const flood = new LedgerBuilder();
    flood.first(300);
    const long = Array.from({ length: 15 }, () => flood.user('steering', 1_000));
    for (let i = 0; i < 4; i++) flood.exchange([{ tokens: 200 }]);
    const flooded = planCompaction(inputOf(flood.entries, { mode: { manual: true } }));
    expect(flooded.summary?.keptSeqs).toEqual(long.slice(-3));
  });

  it('prunes below the low-water mark, not just below the threshold', () => {
    const builder = new LedgerBuilder();
    builder.first(300);
    const old = Array.from({ length: 7 }, () => builder.exchange([{ tokens: 1_200, spooled: true }]));
    for (let i = 0; i < 3; i++) builder.exchange([{ tokens: 200 }]);
    const result = planCompaction(inputOf(builder.entries));
    expect(result.before).toBeGreaterThanOrEqual(TARGETS.thresholdTokens);
    expect(result.after).toBeLessThan(TARGETS.targetTokens);
    // Stubbing two outputs was enough for the threshold; the mark needs more.
    expect(result.stubbed.length).toBeGreaterThan(2);
    expect(result.stubbed).toEqual(expect.arrayContaining([old[0].resultSeqs[0], old[1].resultSeqs[0]]));
    expect(result.summary).toBeNull();
  });

  it('with outputs close to the size of the tail window, stubs the last exchanges oldest first instead of summarizing again', () => {
    // Three exchanges of ~3k each (the protected tail is 3.2k) already hold more than the 6k mark.
    const builder = new LedgerBuilder();
    builder.first(300);
    const tail = [0, 1, 2].map(() => builder.exchange([{ tokens: 3_000, spooled: true }]));
    const input = inputOf(builder.entries);
    const result = planCompaction(input);
    expect(result.summary).toBeNull();
    expect(result.tailStubbed).toEqual([tail[0].resultSeqs[0], tail[1].resultSeqs[0]]);
    expect(result.plan.stubSeqs).not.toContain(tail[2].resultSeqs[0]);
    expect(result.after).toBeLessThan(TARGETS.targetTokens);
    expect(checkToolPairing(contextEntries(builder.entries, result.plan))).toEqual([]);
  });

  it('stubs only as many of the last exchanges as the mark needs', () => {
    const builder = new LedgerBuilder();
    builder.first(300);
    const tail = [0, 1, 2].map(() => builder.exchange([{ tokens: 1_850, spooled: true }]));
    const result = planCompaction(inputOf(builder.entries));
    expect(result.tailStubbed).toEqual([tail[0].resultSeqs[0]]);
    expect(result.after).toBeLessThan(TARGETS.targetTokens);
  });

  it('stubs the newest exchange, which the model has not read yet, only when the request would not fit', () => {
    const builder = new LedgerBuilder();
    builder.first(300);
    builder.exchange([{ tokens: 3_000, spooled: true }]);
    builder.exchange([{ tokens: 3_000, spooled: true }]);
    const newest = builder.exchange([{ tokens: 9_000, spooled: true }]);
    const fits = planCompaction(inputOf(builder.entries));
    expect(fits.plan.stubSeqs).not.toContain(newest.resultSeqs[0]);
    const huge = new LedgerBuilder();
    huge.first(300);
    huge.exchange([{ tokens: 3_000, spooled: true }]);
    huge.exchange([{ tokens: 3_000, spooled: true }]);
    const tooBig = huge.exchange([{ tokens: 12_000, spooled: true }]);
    const overHard = planCompaction(inputOf(huge.entries));
    expect(overHard.plan.stubSeqs).toContain(tooBig.resultSeqs[0]);
    expect(overHard.after).toBeLessThanOrEqual(TARGETS.hardLimitTokens);
  });

  it('summarizes when the summary can reach the mark, leaving the last exchanges verbatim', () => {
    const builder = new LedgerBuilder();
    builder.first(300);
    // Outputs under the spool threshold: pruning cannot help, summarizing can.
    for (let i = 0; i < 25; i++) builder.exchange([{ tokens: 400 }]);
    const result = planCompaction(inputOf(builder.entries));
    expect(result.summary).not.toBeNull();
    expect(result.tailStubbed).toEqual([]);
    expect(result.summary!.spanSeqs.length).toBeGreaterThan(40);
  });

  it('does not call the summarizer for a span too small to pay for it, and says why', () => {
    const builder = new LedgerBuilder();
    builder.first(300);
    builder.exchange([{ tokens: 300 }]);
    // Outputs of 2.9k: under the threshold with three exchanges, only the tail can go below the mark.
    for (let i = 0; i < 3; i++) builder.exchange([{ tokens: 2_900 }]);
    const result = planCompaction(inputOf(builder.entries, { before: 10_500 }));
    expect(result.summary).toBeNull();
    expect(result.noSummaryReason).toBe(undefined);
    const stuck = planCompaction(
      inputOf(builder.entries, { before: 10_500, targets: { ...TARGETS, targetTokens: 1_000 } }),
    );
    expect(stuck.summary).toBeNull();
    expect(stuck.noSummaryReason).toMatch(/the span before the last exchanges holds only \d+ tokens/);
    expect(shortfallReason(builder.entries, stuck.plan, FIXED, stuck.after, stuck.noSummaryReason)).toMatch(
      /^system prompt and tools \d+k?, first message \d+, later messages \d+k?; no summary: the span/,
    );
  });

  it('over the hard limit, summarizes even a small span, unless stubbing makes the request fit', () => {
    const builder = new LedgerBuilder();
    builder.first(300);
    builder.exchange([{ tokens: 300 }]);
    for (let i = 0; i < 3; i++) builder.exchange([{ tokens: 100 }]);
    const small = planCompaction(inputOf(builder.entries, { before: TARGETS.hardLimitTokens + 1 }));
    expect(small.summary).not.toBeNull();
    const stubbable = new LedgerBuilder();
    stubbable.first(300);
    stubbable.exchange([{ tokens: 300 }]);
    for (let i = 0; i < 3; i++) stubbable.exchange([{ tokens: 3_000, spooled: true }]);
    const input = inputOf(stubbable.entries);
    const fits = planCompaction({ ...input, before: TARGETS.hardLimitTokens + 1, mode: { forced: true } });
    expect(fits.summary).toBeNull();
    expect(fits.after).toBeLessThanOrEqual(TARGETS.hardLimitTokens);
  });

  it('a manual compaction summarizes whatever span there is', () => {
    const builder = new LedgerBuilder();
    builder.first(300);
    builder.exchange([{ tokens: 100 }]);
    for (let i = 0; i < 3; i++) builder.exchange([{ tokens: 100 }]);
    const input = inputOf(builder.entries, { mode: { manual: true } });
    expect(planCompaction(input).summary).not.toBeNull();
    expect(planCompaction({ ...input, mode: {} }).summary).toBeNull();
  });

  it('pauses summaries but still prunes when auto-compact is paused', () => {
    const builder = new LedgerBuilder();
    builder.first(300);
    for (let i = 0; i < 25; i++) builder.exchange([{ tokens: 400 }]);
    const result = planCompaction(inputOf(builder.entries, { mode: { pruneOnly: true } }));
    expect(result.summary).toBeNull();
    expect(result.noSummaryReason).toBe('auto-compact is paused');
  });

  it('under the legacy rules aims just under the threshold and never stubs the tail', () => {
    const builder = new LedgerBuilder();
    builder.first(300);
    for (let i = 0; i < 6; i++) builder.exchange([{ tokens: 1_200, spooled: true }]);
    for (let i = 0; i < 3; i++) builder.exchange([{ tokens: 3_000, spooled: true }]);
    const input = inputOf(builder.entries, { mode: { legacy: true } });
    const legacy = planCompaction(input);
    expect(legacy.tailStubbed).toEqual([]);
    expect(legacy.after).toBe(FIXED + prunedContextTokens(builder.entries, legacy.plan));
    expect(legacy.summary).not.toBeNull();
  });
});

describe('completeSummary', () => {
  it('stubs the last exchanges when the stored summary leaves the estimate over the mark', () => {
    const builder = new LedgerBuilder();
    builder.first(300);
    for (let i = 0; i < 20; i++) builder.exchange([{ tokens: 400 }]);
    const tail = [0, 1, 2].map(() => builder.exchange([{ tokens: 1_200, spooled: true }]));
    const input = inputOf(builder.entries);
    const pruned = planCompaction(input);
    expect(pruned.summary).not.toBeNull();
    // Even the expected summary leaves the tail over the mark: the oldest exchange is stubbed up front.
    expect(pruned.tailStubbed).toEqual([tail[0].resultSeqs[0]]);
    const small = completeSummary(input, pruned, { seq: builder.nextSeq(), role: 'user', tokens: 300 });
    expect(small.tailStubbed).toEqual([]);
    expect(small.after).toBeLessThan(TARGETS.targetTokens);
    // A summary larger than expected: one more exchange of the tail is stubbed, never the newest.
    const large = completeSummary(input, pruned, { seq: builder.nextSeq(), role: 'user', tokens: 2_300 });
    expect(large.tailStubbed).toEqual([tail[1].resultSeqs[0]]);
    expect(large.plan.stubSeqs).not.toContain(tail[2].resultSeqs[0]);
    expect(large.after).toBeLessThan(TARGETS.targetTokens);
    expect(large.plan.summarySeq).toBe(large.ledger.at(-1)!.seq);
  });
});

describe('compactionFloorTokens', () => {
  it('counts the tail as stubs, so a small window with large outputs is not judged hopeless', () => {
    // The reported case: three 3k outputs in the tail. The legacy floor keeps them whole and adds a
    // 2k summary, over the threshold, so auto-compact waited until the hard limit: every compaction forced.
    const builder = new LedgerBuilder();
    builder.first(300);
    for (let i = 0; i < 5; i++) builder.exchange([{ tokens: 3_000, spooled: true }]);
    const plan = initialContextPlan(1);
    const legacy = summaryFloorTokens(builder.entries, plan, { fixedTokens: 2_500 });
    const floor = compactionFloorTokens({
      ledger: builder.entries,
      plan,
      before: 2_500 + prunedContextTokens(builder.entries, plan),
      targets: TARGETS,
      fixedTokens: 2_500,
    });
    expect(legacy).toBeGreaterThanOrEqual(TARGETS.thresholdTokens);
    expect(floor).toBeLessThan(TARGETS.thresholdTokens);
    expect(floor).toBeGreaterThanOrEqual(2_500 + 300 + 3_000 + 2 * STUB_TOKENS);
  });
});
