/**
 * Issue 9.9: the ledger carried in workflow state has a size budget. Folding old runs of small messages
 * into range entries changes no compaction decision (pruning, summary span, tail stubs, estimates,
 * floors), and a 1M-token ledger of small messages keeps the whole control state under 256 KiB.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compactionFloorTokens, planCompaction } from '../../../core/compaction/compaction-plan';
import { tokensAppendedSince } from '../../../core/compaction/estimate';
import { planPrune, prunedContextTokens } from '../../../core/compaction/prune';
import { initialCompactionState } from '../../../core/compaction/state';
import { controlStateBytes, controlStateSize, jsonBytes } from '../../../core/compaction/state-size';
import {
  applySummary,
  planSummary,
  spanRanges,
  summaryFloorTokens,
} from '../../../core/compaction/summary-span';
import { planTailPrune } from '../../../core/compaction/tail-prune';
import type { CompactionTargets } from '../../../core/compaction/targets';
import { CONTROL_STATE_BUDGET_BYTES, LEDGER_FOLD_MIN_ENTRIES } from '../../../core/compaction/thresholds';
import { type ContextPlan, initialContextPlan } from '../../../core/context-plan';
import { DEFAULT_LIMITS, initialGoalState } from '../../../core/goal';
import { appendLedger, type LedgerEntry, lastSeqOf, ledgerTokens, messageCount } from '../../../core/ledger';
import { eventArb, LedgerBuilder, type LedgerEvent } from './ledger-fixtures';

/** The same entries, appended the way the workflow does (folding) and one by one (the reference). */
function appendBoth(into: { full: LedgerEntry[]; folded: LedgerEntry[] }, entries: LedgerEntry[]) {
  for (const entry of entries) {
    into.full = [...into.full, entry];
    into.folded = appendLedger(into.folded, entry);
  }
}

/** The seq the latest request covered: everything before the latest assistant message. */
function coveredSeq(ledger: LedgerEntry[]): number {
  const assistants = ledger.filter((entry) => entry.role === 'assistant').map((entry) => entry.seq);
  return assistants.length === 0 ? 0 : Math.max(...assistants) - 1;
}

/** Everything a compaction decides from a ledger, in a form comparable across full and folded ledgers. */
function decisions(
  ledger: LedgerEntry[],
  plan: ContextPlan,
  targets: CompactionTargets,
  fixed: number,
  forced: boolean,
) {
  const shown = prunedContextTokens(ledger, plan);
  const before = fixed + shown;
  const spanOf = (span: ReturnType<typeof planSummary>) =>
    span && {
      ranges: spanRanges(ledger, span),
      messages: messageCount(ledger.filter((entry) => span.spanSeqs.includes(entry.seq))),
      keptSeqs: span.keptSeqs,
      tailFromSeq: span.tailFromSeq,
      previousSummarySeq: span.previousSummarySeq,
    };
  const prune = planPrune(ledger, plan, {
    windowTokens: targets.windowTokens,
    thresholdTokens: targets.thresholdTokens,
    targetTokens: targets.targetTokens,
    fixedTokens: fixed,
    forced,
  });
  const compaction = planCompaction({ ledger, plan, before, targets, fixedTokens: fixed, mode: { forced } });
  return {
    shown,
    lastSeq: lastSeqOf(ledger),
    appended: tokensAppendedSince(ledger, coveredSeq(ledger)),
    prune,
    span: spanOf(planSummary(ledger, plan, { forced })),
    legacyFloor: summaryFloorTokens(ledger, plan, { fixedTokens: fixed, forced }),
    floor: compactionFloorTokens({ ledger, plan, before, targets, fixedTokens: fixed }),
    tail: planTailPrune(ledger, plan, {
      forced,
      estimateTokens: before,
      fixedTokens: fixed,
      targetTokens: targets.targetTokens,
      hardLimitTokens: targets.hardLimitTokens,
    }),
    compaction: { ...compaction, summary: spanOf(compaction.summary) },
  };
}

const targetsArb: fc.Arbitrary<{ targets: CompactionTargets; fixed: number; forced: boolean }> = fc
  .record({
    usable: fc.integer({ min: 2_000, max: 60_000 }),
    thresholdPct: fc.integer({ min: 30, max: 95 }),
    targetPct: fc.integer({ min: 5, max: 90 }),
    fixed: fc.integer({ min: 0, max: 3_000 }),
    forced: fc.boolean(),
  })
  .map(({ usable, thresholdPct, targetPct, fixed, forced }) => {
    const thresholdTokens = Math.floor((usable * thresholdPct) / 100);
    return {
      targets: {
        windowTokens: Math.round(usable * 1.25),
        usableInputTokens: usable,
        thresholdTokens,
        targetTokens: Math.min(Math.floor((usable * targetPct) / 100), thresholdTokens - 1),
        hardLimitTokens: usable,
      },
      fixed,
      forced,
    };
  });

/** Mostly small messages, so that folding has runs to fold, with the odd large output and steering. */
const smallEventArb: fc.Arbitrary<LedgerEvent> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant('exchange' as const),
      results: fc.array(fc.record({ tokens: fc.integer({ min: 5, max: 400 }) }), {
        minLength: 1,
        maxLength: 3,
      }),
    }),
  },
  { weight: 2, arbitrary: eventArb },
);

describe('folding the ledger', () => {
  it('changes no compaction decision, round after round of summaries', () => {
    let foldedRuns = 0;
    fc.assert(
      fc.property(
        fc.array(fc.array(smallEventArb, { minLength: 15, maxLength: 60 }), { minLength: 1, maxLength: 4 }),
        targetsArb,
        (rounds, { targets, fixed, forced }) => {
          const builder = new LedgerBuilder();
          builder.first(300);
          const ledgers = { full: [] as LedgerEntry[], folded: [] as LedgerEntry[] };
          appendBoth(ledgers, builder.entries);
          let plan = initialContextPlan(1);
          let emitted = builder.entries.length;
          for (const events of rounds) {
            for (const event of events) builder.apply(event);
            appendBoth(ledgers, builder.entries.slice(emitted));
            emitted = builder.entries.length;
            expect(ledgerTokens(ledgers.folded)).toBe(ledgerTokens(ledgers.full));
            if (ledgers.folded.some((entry) => entry.role === 'range')) foldedRuns++;
            const full = decisions(ledgers.full, plan, targets, fixed, forced);
            expect(decisions(ledgers.folded, plan, targets, fixed, forced)).toEqual(full);
            // The compaction's pruning happens; then its summary, on both ledgers alike.
            plan = planCompaction({
              ledger: ledgers.full,
              plan,
              before: fixed + full.shown,
              targets,
              fixedTokens: fixed,
              mode: { forced },
            }).plan;
            const span = planSummary(ledgers.full, plan, { forced });
            const foldedSpan = planSummary(ledgers.folded, plan, { forced });
            if (!span || !foldedSpan) continue;
            const summary: LedgerEntry = {
              seq: builder.nextSeq(),
              role: 'user',
              tokens: 400,
              kind: 'summary',
            };
            emitted = builder.entries.length;
            const full2 = applySummary(ledgers.full, plan, summary, span);
            const folded2 = applySummary(ledgers.folded, plan, summary, foldedSpan);
            expect(folded2.plan).toEqual(full2.plan);
            ledgers.full = full2.ledger;
            ledgers.folded = folded2.ledger;
            plan = full2.plan;
          }
        },
      ),
      { numRuns: 200 },
    );
    // The premise: most generated ledgers were long enough to fold.
    expect(foldedRuns).toBeGreaterThan(100);
  });

  it('leaves short ledgers one entry per message', () => {
    const builder = new LedgerBuilder();
    builder.first();
    while (builder.entries.length < LEDGER_FOLD_MIN_ENTRIES - 1) builder.exchange([{ tokens: 10 }]);
    let ledger: LedgerEntry[] = [];
    for (const entry of builder.entries) ledger = appendLedger(ledger, entry);
    expect(ledger).toEqual(builder.entries);
  });

  it('keeps the first message, steering, large outputs and the verbatim tail as entries of their own', () => {
    const builder = new LedgerBuilder();
    builder.first();
    for (let i = 0; i < 40; i++) builder.exchange([{ tokens: 20 }]);
    const steering = builder.user('steering');
    const large = builder.exchange([{ tokens: 3_000, spooled: true }]);
    for (let i = 0; i < 40; i++) builder.exchange([{ tokens: 20 }]);
    let ledger: LedgerEntry[] = [];
    for (const entry of builder.entries) ledger = appendLedger(ledger, entry);
    const seqs = ledger.map((entry) => entry.seq);
    expect(seqs).toContain(1);
    expect(seqs).toContain(steering);
    expect(seqs).toContain(large.resultSeqs[0]);
    // The last three exchanges stay whole, with their call ids for pairing.
    expect(ledger.slice(-6)).toEqual(builder.entries.slice(-6));
    expect(ledger.filter((entry) => entry.role === 'range').length).toBeGreaterThanOrEqual(2);
    // Folding runs once the ledger reaches its minimum length, so fewer entries than that remain.
    expect(ledger.length).toBeLessThan(LEDGER_FOLD_MIN_ENTRIES);
    expect(messageCount(ledger)).toBe(builder.entries.length);
  });
});

/** A deterministic stream of small messages (5–500 tokens) adding up to `total` tokens. */
function smallMessageLedger(total: number): { entries: LedgerEntry[]; folded: LedgerEntry[] } {
  const builder = new LedgerBuilder();
  builder.first(500);
  let folded: LedgerEntry[] = [];
  let emitted = 0;
  let tokens = 0;
  let n = 0;
  // A linear congruential generator: the same ledger on every run, without Math.random.
  let seed = 42;
  const next = (max: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed % max;
  };
  while (tokens < total) {
    n++;
    if (n % 400 === 0) builder.user('steering', 40);
    else if (n % 25 === 0) builder.user('continuation', 120);
    else if (n % 7 === 0) builder.text(5 + next(300));
    else builder.exchange(Array.from({ length: 1 + next(3) }, () => ({ tokens: 5 + next(496) })));
    for (const entry of builder.entries.slice(emitted)) {
      folded = appendLedger(folded, entry);
      tokens += entry.tokens;
    }
    emitted = builder.entries.length;
  }
  return { entries: builder.entries, folded };
}

describe('the control state of a 1M-token goal', () => {
  it('stays under 256 KiB with a ledger of small messages', () => {
    const { entries, folded } = smallMessageLedger(1_000_000);
    expect(ledgerTokens(folded)).toBeGreaterThanOrEqual(1_000_000);
    const goal = {
      sessionId: 'sess-1m',
      objective: 'a long goal on a 1M-token model',
      workspace: '/work/space',
      model: 'openai:gpt-4.1',
      limits: DEFAULT_LIMITS,
    };
    const state = { ...initialGoalState(goal), compaction: initialCompactionState(1), ledger: folded };
    const unfolded = { ...state, ledger: entries };
    const size = controlStateSize(state);
    console.log(
      `1M-token ledger: ${entries.length} messages in ${folded.length} entries; control state ${size.bytes} bytes ` +
        `(ledger ${size.ledgerBytes}); unfolded it would be ${controlStateBytes(unfolded)} bytes`,
    );
    expect(size.bytes).toBeLessThan(CONTROL_STATE_BUDGET_BYTES);
    expect(size.ledgerMessages).toBe(entries.length);
    // Without folding the same state is far over the budget: the test measures what folding does.
    expect(jsonBytes(unfolded)).toBeGreaterThan(CONTROL_STATE_BUDGET_BYTES);
  });

  it('stays under 256 KiB with outputs just large enough to be pruned, up to the threshold of a 1M window', () => {
    // The worst case folding cannot fold: every exchange holds a prunable output. Compaction starts at
    // the threshold (85 % of the usable input), so the context never holds much more than this.
    const builder = new LedgerBuilder();
    builder.first(500);
    let ledger: LedgerEntry[] = [];
    let emitted = 0;
    while (ledgerTokens(ledger) < 850_000) {
      builder.exchange([{ tokens: 520, spooled: true }]);
      for (const entry of builder.entries.slice(emitted)) ledger = appendLedger(ledger, entry);
      emitted = builder.entries.length;
    }
    const goal = {
      sessionId: 'sess-1m-large',
      objective: 'a long goal on a 1M-token model',
      workspace: '/work/space',
      model: 'openai:gpt-4.1',
      limits: DEFAULT_LIMITS,
    };
    const state = { ...initialGoalState(goal), compaction: initialCompactionState(1), ledger };
    const size = controlStateSize(state);
    console.log(
      `${emitted} messages of ~520-token outputs (${ledgerTokens(ledger)} tokens): ${size.ledgerEntries} entries, ` +
        `control state ${size.bytes} bytes`,
    );
    expect(size.bytes).toBeLessThan(CONTROL_STATE_BUDGET_BYTES);
  });
});
