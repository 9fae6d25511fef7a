import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PruneOptions, planPrune, prunedContextTokens } from '../../../core/compaction/prune';
import { applySummary, planSummary } from '../../../core/compaction/summary-span';
import {
  LARGE_ARG_MIN_TOKENS,
  LARGE_OUTPUT_MIN_TOKENS,
  PROTECTED_WINDOW_MAX_TOKENS,
  STUB_EXCERPT_TOKENS,
  STUB_TOKENS,
  TAIL_TOOL_EXCHANGES,
  TAIL_TOOL_EXCHANGES_FORCED,
} from '../../../core/compaction/thresholds';
import {
  type ContextPlan,
  checkToolPairing,
  contextEntries,
  initialContextPlan,
} from '../../../core/context-plan';
import type { LedgerEntry } from '../../../core/ledger';
import {
  buildLedger,
  eventArb,
  exchangeArb,
  LedgerBuilder,
  type LedgerEvent,
  windowArb,
} from './ledger-fixtures';

const RUNS = 200;
const FIRST_SEQ = 1;

// The rules restated independently of the implementation, so the properties check rather than mirror it.

/** The context after the first message and the summary: kept messages, then the tail. */
function bodyOf(ledger: LedgerEntry[], plan: ContextPlan): LedgerEntry[] {
  return contextEntries(ledger, plan).filter(
    (entry) => entry.seq !== plan.firstSeq && entry.seq !== plan.summarySeq,
  );
}

/** The tail after kept messages. */
function tailOf(ledger: LedgerEntry[], plan: ContextPlan): LedgerEntry[] {
  return bodyOf(ledger, plan).filter((entry) => !plan.keptSeqs.includes(entry.seq));
}

/** The latest `n` tool exchanges: each assistant message with calls and the seqs of all its results. */
function latestExchanges(entries: LedgerEntry[], n: number): Array<{ call: number; results: number[] }> {
  return entries
    .filter((entry) => entry.role === 'assistant' && (entry.toolCallIds?.length ?? 0) > 0)
    .slice(-n)
    .map((call) => ({
      call: call.seq,
      results: entries
        .filter((entry) => entry.role === 'tool' && call.toolCallIds?.includes(entry.toolCallId ?? ''))
        .map((entry) => entry.seq),
    }));
}

/** Seqs of the verbatim tail: from the earliest of the latest `n` exchanges on. */
function verbatimSeqs(entries: LedgerEntry[], n: number): number[] {
  const exchanges = latestExchanges(entries, n);
  if (exchanges.length === 0) return [];
  return entries.filter((entry) => entry.seq >= exchanges[0].call).map((entry) => entry.seq);
}

/** Seqs starting within the newest min(window/5, 40k) tokens, stubs counted as shown. */
function recentSeqs(tail: LedgerEntry[], plan: ContextPlan, windowTokens: number): number[] {
  const budget = Math.min(Math.floor(windowTokens / 5), PROTECTED_WINDOW_MAX_TOKENS);
  const seqs: number[] = [];
  let newer = 0;
  for (const entry of [...tail].reverse()) {
    if (newer >= budget) break;
    seqs.push(entry.seq);
    if (plan.stubSeqs.includes(entry.seq))
      newer += STUB_TOKENS + (entry.spoolId === undefined ? STUB_EXCERPT_TOKENS : 0);
    else if (plan.elideArgsSeqs.includes(entry.seq)) newer += entry.tokens - (entry.largeArgsTokens ?? 0);
    else newer += entry.tokens;
  }
  return seqs;
}

const exchangesKept = (forced: boolean) => (forced ? TAIL_TOOL_EXCHANGES_FORCED : TAIL_TOOL_EXCHANGES);

/** Pruning options around the ledger's size, so every stage gets exercised. */
const pruneSettingsArb = fc.record({
  windowTokens: windowArb,
  fixedTokens: fc.integer({ min: 0, max: 20_000 }),
  // Mostly near the ledger's size, where the two stages and the summary decision are all in play.
  thresholdShare: fc.oneof(
    { weight: 3, arbitrary: fc.double({ min: 0.5, max: 1.05, noNaN: true }) },
    { weight: 1, arbitrary: fc.double({ min: 0.05, max: 1.3, noNaN: true }) },
  ),
  forced: fc.boolean(),
});
type PruneSettings = { windowTokens: number; fixedTokens: number; thresholdShare: number; forced: boolean };

function pruneOptions(ledger: LedgerEntry[], plan: ContextPlan, settings: PruneSettings): PruneOptions {
  const size = settings.fixedTokens + prunedContextTokens(ledger, plan);
  const { thresholdShare: _share, ...rest } = settings;
  return { ...rest, thresholdTokens: Math.round(size * settings.thresholdShare) };
}

/** Checks every pruning property for one ledger and plan; returns the pruned plan. */
function checkPrune(ledger: LedgerEntry[], plan: ContextPlan, options: PruneOptions): ContextPlan {
  const result = planPrune(ledger, plan, options);
  expect(planPrune(ledger, plan, options)).toEqual(result);

  const before = contextEntries(ledger, plan);
  const after = contextEntries(ledger, result.plan);
  expect(after).toEqual(before);
  expect(after[0]?.seq).toBe(FIRST_SEQ);
  expect(checkToolPairing(after)).toEqual([]);

  const bySeq = new Map(ledger.map((entry) => [entry.seq, entry]));
  for (const seq of result.stubbed) {
    expect(bySeq.get(seq)).toMatchObject({ role: 'tool' });
    expect(bySeq.get(seq)!.tokens).toBeGreaterThan(LARGE_OUTPUT_MIN_TOKENS);
  }
  for (const seq of result.elided) {
    expect(bySeq.get(seq)!.largeArgsTokens ?? 0).toBeGreaterThanOrEqual(LARGE_ARG_MIN_TOKENS);
  }
  expect(result.plan.stubSeqs).toEqual(expect.arrayContaining(plan.stubSeqs));

  const tail = tailOf(ledger, plan);
  const untouchable = verbatimSeqs(tail, exchangesKept(options.forced ?? false));
  for (const seq of [...result.stubbed, ...result.elided]) expect(untouchable).not.toContain(seq);
  const recent = recentSeqs(tail, plan, options.windowTokens);
  if (result.stage === 'all') {
    // The protected window is given up only when stubbing old spooled outputs outside it was not enough.
    const firstStage = tail.filter(
      (entry) =>
        entry.role === 'tool' &&
        entry.spoolId !== undefined &&
        entry.tokens > LARGE_OUTPUT_MIN_TOKENS &&
        !untouchable.includes(entry.seq) &&
        !recent.includes(entry.seq) &&
        !plan.stubSeqs.includes(entry.seq),
    );
    const saved = firstStage.reduce((sum, entry) => sum + entry.tokens - STUB_TOKENS, 0);
    expect(result.before - saved).toBeGreaterThanOrEqual(options.thresholdTokens);
  } else {
    for (const seq of result.stubbed) expect(recent).not.toContain(seq);
  }

  expect(result.before).toBe(options.fixedTokens + prunedContextTokens(ledger, plan));
  expect(result.after).toBe(options.fixedTokens + prunedContextTokens(ledger, result.plan));
  expect(result.after).toBeLessThanOrEqual(result.before);
  expect(result.enough).toBe(result.after < options.thresholdTokens);
  expect(result.stage === 'none').toBe(result.before < options.thresholdTokens);

  const again = planPrune(ledger, result.plan, options);
  expect(again.plan).toEqual(result.plan);
  expect(again.stubbed).toEqual([]);
  expect(again.elided).toEqual([]);
  return result.plan;
}

/** Checks every summary property; returns the compacted ledger and plan, or null when there was nothing to do. */
function checkSummary(
  ledger: LedgerEntry[],
  plan: ContextPlan,
  forced: boolean,
  summarySeq: number,
): { ledger: LedgerEntry[]; plan: ContextPlan } | null {
  const span = planSummary(ledger, plan, { forced });
  expect(planSummary(ledger, plan, { forced })).toEqual(span);
  const body = bodyOf(ledger, plan);
  const keep = exchangesKept(forced);
  const tailSeqs = verbatimSeqs(tailOf(ledger, plan), keep);
  const before = body.filter((entry) => !tailSeqs.includes(entry.seq));
  // Every steering message stays verbatim (no budget is given here).
  const steering = before.filter((entry) => entry.kind === 'steering');
  if (!span) {
    // Nothing to compact: only messages that would be kept verbatim again lie before the tail.
    expect(before.length).toBe(steering.length);
    return null;
  }
  expect(span.spanSeqs).toEqual(before.map((entry) => entry.seq));
  expect(span.keptSeqs).toEqual(steering.map((entry) => entry.seq));
  expect(span.previousSummarySeq).toBe(plan.summarySeq);

  const summary: LedgerEntry = { seq: summarySeq, role: 'user', tokens: 500, kind: 'summary' };
  const next = applySummary(ledger, plan, summary, span);
  const context = contextEntries(next.ledger, next.plan);
  expect(checkToolPairing(context)).toEqual([]);
  expect(context.map((entry) => entry.seq).slice(0, 2 + span.keptSeqs.length)).toEqual([
    FIRST_SEQ,
    summarySeq,
    ...span.keptSeqs,
  ]);
  // The required exchanges are there, whole, and the rest of the old tail with them.
  const seqs = context.map((entry) => entry.seq);
  for (const exchange of latestExchanges(body, keep)) {
    expect(seqs).toEqual(expect.arrayContaining([exchange.call, ...exchange.results]));
  }
  expect(seqs.slice(2 + span.keptSeqs.length)).toEqual(tailSeqs);
  for (const seq of [...next.plan.stubSeqs, ...next.plan.elideArgsSeqs]) expect(tailSeqs).toContain(seq);
  // The ledger holds what is in context and nothing else; one summary.
  expect(next.ledger.map((entry) => entry.seq)).toEqual([...seqs].sort((a, b) => a - b));
  expect(next.ledger.filter((entry) => entry.kind === 'summary')).toEqual([summary]);
  return next;
}

describe('compaction properties', () => {
  it('generated ledgers are well formed (the premise of the other properties)', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 40 }), (events) => {
        const ledger = buildLedger(events);
        expect(checkToolPairing(contextEntries(ledger, initialContextPlan(FIRST_SEQ)))).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it('pruning keeps pairing, the first message, the verbatim tail and the protected window; deterministic and idempotent', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 40 }), pruneSettingsArb, (events, settings) => {
        const ledger = buildLedger(events);
        const plan = initialContextPlan(FIRST_SEQ);
        checkPrune(ledger, plan, pruneOptions(ledger, plan, settings));
      }),
      { numRuns: RUNS },
    );
  });

  it('summarizing keeps pairing, the first message, the kept messages and the required tail', () => {
    fc.assert(
      fc.property(
        fc.array(eventArb, { maxLength: 40 }),
        pruneSettingsArb,
        fc.boolean(),
        (events, settings, pruneFirst) => {
          const ledger = buildLedger(events);
          let plan = initialContextPlan(FIRST_SEQ);
          if (pruneFirst) plan = planPrune(ledger, plan, pruneOptions(ledger, plan, settings)).plan;
          checkSummary(ledger, plan, settings.forced, ledger.length + 1);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('five successive compactions keep the first message, every steering message and only the latest summary', () => {
    // Each round adds at least four exchanges, so there is always something to summarize.
    const roundArb = fc
      .tuple(fc.array(eventArb, { maxLength: 12 }), fc.array(exchangeArb, { minLength: 4, maxLength: 6 }))
      .chain(([events, exchanges]) =>
        fc.shuffledSubarray([...events, ...exchanges], { minLength: events.length + exchanges.length }),
      );
    fc.assert(
      fc.property(
        fc.array(roundArb, { minLength: 5, maxLength: 5 }),
        pruneSettingsArb,
        (rounds, settings) => {
          let ledger: LedgerEntry[] = buildLedger([]);
          let plan = initialContextPlan(FIRST_SEQ);
          let calls = 0;
          const summaries: number[] = [];
          const steering: number[] = [];
          for (const events of rounds as LedgerEvent[][]) {
            const builder = LedgerBuilder.after(ledger, calls);
            for (const event of events) builder.apply(event);
            calls = builder.callCount;
            steering.push(...builder.entries.filter((e) => e.kind === 'steering').map((e) => e.seq));
            ledger = [...ledger, ...builder.entries];
            expect(checkToolPairing(contextEntries(ledger, plan))).toEqual([]);
            plan = checkPrune(ledger, plan, pruneOptions(ledger, plan, settings));
            const next = checkSummary(ledger, plan, settings.forced, builder.nextSeq());
            expect(next).not.toBeNull();
            ledger = next!.ledger;
            plan = next!.plan;
            summaries.push(plan.summarySeq!);
            // Whatever was pruned or summarized, every steering message so far is still shown verbatim.
            const shown = contextEntries(ledger, plan).map((entry) => entry.seq);
            expect(shown).toEqual(expect.arrayContaining(steering));
            for (const seq of steering) expect(plan.stubSeqs).not.toContain(seq);
          }
          expect(summaries).toHaveLength(5);
          expect(ledger.filter((entry) => entry.kind === 'summary').map((entry) => entry.seq)).toEqual([
            summaries[4],
          ]);
          expect(
            contextEntries(ledger, plan)
              .slice(0, 2)
              .map((entry) => entry.seq),
          ).toEqual([FIRST_SEQ, summaries[4]]);
        },
      ),
      { numRuns: RUNS / 2 },
    );
  });
});
