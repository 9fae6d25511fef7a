import { describe, expect, it } from 'vitest';
import { planPrune, protectedWindowTokens, prunedContextTokens } from '../../../core/compaction/prune';
import { STUB_EXCERPT_TOKENS, STUB_TOKENS } from '../../../core/compaction/thresholds';
import { initialContextPlan } from '../../../core/context-plan';
import { LedgerBuilder, type ResultSpec } from './ledger-fixtures';

const small: ResultSpec = { tokens: 100 };
const FIXED = 1_000;
/** A fifth of it is 2k: the protected window covers the small tail and one large output before it. */
const WINDOW = 10_000;

/**
 * first, e1 (10k output), e2 (8k), e3 (small, with 5k of arguments), then e4..e6: the verbatim tail.
 * Newest first, the tail is 480 tokens and e3 ~5.2k, so the 2k window reaches e3 but not e2.
 */
function conversation(e1: ResultSpec, e2: ResultSpec, e4: ResultSpec = small) {
  const builder = new LedgerBuilder();
  builder.first(200);
  const seqs = [
    builder.exchange([e1]),
    builder.exchange([e2]),
    builder.exchange([small], { largeArgsTokens: 5_000 }),
    builder.exchange([e4]),
    builder.exchange([small]),
    builder.exchange([small]),
  ];
  return {
    ledger: builder.entries,
    out: seqs.map((seq) => seq.resultSeqs[0]),
    calls: seqs.map((s) => s.assistantSeq),
  };
}

describe('protectedWindowTokens', () => {
  it('is a fifth of the window, at most 40k', () => {
    expect(protectedWindowTokens(100_000)).toBe(20_000);
    expect(protectedWindowTokens(200_000)).toBe(40_000);
    expect(protectedWindowTokens(1_000_000)).toBe(40_000);
  });
});

describe('planPrune', () => {
  it('does nothing under the threshold', () => {
    const { ledger } = conversation({ tokens: 10_000, spooled: true }, { tokens: 8_000, spooled: true });
    const plan = initialContextPlan(1);
    const result = planPrune(ledger, plan, {
      windowTokens: WINDOW,
      thresholdTokens: 100_000,
      fixedTokens: FIXED,
    });
    expect(result).toEqual({
      plan,
      stubbed: [],
      elided: [],
      before: result.before,
      after: result.before,
      enough: true,
      stage: 'none',
    });
  });

  it('stubs old spooled outputs first, with no second stage once under the threshold', () => {
    const { ledger, out } = conversation({ tokens: 10_000, spooled: true }, { tokens: 8_000, spooled: true });
    const plan = initialContextPlan(1);
    const before = FIXED + prunedContextTokens(ledger, plan);
    const result = planPrune(ledger, plan, {
      windowTokens: WINDOW,
      thresholdTokens: 15_000,
      fixedTokens: FIXED,
    });
    expect(result.stage).toBe('spooled');
    expect(result.stubbed).toEqual([out[0], out[1]]);
    expect(result.elided).toEqual([]);
    expect(result.plan.stubSeqs).toEqual([out[0], out[1]]);
    expect(result.before).toBe(before);
    expect(result.after).toBe(before - (10_000 - STUB_TOKENS) - (8_000 - STUB_TOKENS));
    expect(result.enough).toBe(true);
  });

  it('leaves spooled outputs in the protected recent window alone while that is enough', () => {
    const { ledger, out } = conversation({ tokens: 10_000, spooled: true }, { tokens: 8_000, spooled: true });
    // A 50k window protects 10k: e3 and e2 are in it, e1 is not.
    const result = planPrune(ledger, initialContextPlan(1), {
      windowTokens: 50_000,
      thresholdTokens: 20_000,
      fixedTokens: FIXED,
    });
    expect(result.stage).toBe('spooled');
    expect(result.stubbed).toEqual([out[0]]);
    expect(result.enough).toBe(true);
  });

  it('leaves outputs without a spool copy for the second stage', () => {
    const { ledger, out, calls } = conversation({ tokens: 10_000 }, { tokens: 8_000, spooled: true });
    const result = planPrune(ledger, initialContextPlan(1), {
      windowTokens: 50_000,
      thresholdTokens: 15_000,
      fixedTokens: FIXED,
    });
    // Stubbing e1 alone is not possible in the first stage, and e2 is protected: the second stage
    // stubs both (the window is not protected any more) and elides e3's large arguments.
    expect(result.stage).toBe('all');
    expect(result.stubbed).toEqual([out[0], out[1]]);
    expect(result.elided).toEqual([calls[2]]);
    expect(result.plan.elideArgsSeqs).toEqual([calls[2]]);
    // The stub of e1 carries an excerpt, having no spool copy to point at.
    const saved = 10_000 - (STUB_TOKENS + STUB_EXCERPT_TOKENS) + (8_000 - STUB_TOKENS) + 5_000;
    expect(result.after).toBe(result.before - saved);
    expect(result.enough).toBe(true);
  });

  it('never touches the last three exchanges, however large', () => {
    const { ledger, out } = conversation({ tokens: 600 }, { tokens: 600 }, { tokens: 30_000, spooled: true });
    const result = planPrune(ledger, initialContextPlan(1), {
      windowTokens: WINDOW,
      thresholdTokens: 1_000,
      fixedTokens: FIXED,
    });
    expect(result.stage).toBe('all');
    expect(result.stubbed).toEqual([out[0], out[1]]);
    expect(result.plan.stubSeqs).not.toContain(out[3]);
    expect(result.enough).toBe(false);
  });

  it('keeps only two exchanges verbatim when forced', () => {
    const { ledger, out } = conversation({ tokens: 600 }, { tokens: 600 }, { tokens: 30_000, spooled: true });
    const result = planPrune(ledger, initialContextPlan(1), {
      windowTokens: WINDOW,
      thresholdTokens: 1_000,
      fixedTokens: FIXED,
      forced: true,
    });
    expect(result.stubbed).toEqual([out[0], out[1], out[3]]);
  });

  it('stubs only outputs over ~500 tokens', () => {
    const { ledger, out } = conversation({ tokens: 501 }, { tokens: 500 });
    const result = planPrune(ledger, initialContextPlan(1), {
      windowTokens: 0,
      thresholdTokens: 0,
      fixedTokens: 0,
    });
    expect(result.stubbed).toEqual([out[0]]);
  });

  it('starts from the measured estimate when given one', () => {
    const { ledger, out } = conversation({ tokens: 10_000, spooled: true }, { tokens: 100 });
    const result = planPrune(ledger, initialContextPlan(1), {
      windowTokens: WINDOW,
      thresholdTokens: 30_000,
      fixedTokens: FIXED,
      estimateTokens: 31_000,
    });
    expect(result.stubbed).toEqual([out[0]]);
    expect(result.before).toBe(31_000);
    expect(result.after).toBe(31_000 - (10_000 - STUB_TOKENS));
  });

  it('keeps earlier stubs, even inside the protected window, and reports only new ones', () => {
    const { ledger, out } = conversation({ tokens: 10_000, spooled: true }, { tokens: 8_000, spooled: true });
    const plan = { ...initialContextPlan(1), stubSeqs: [out[1]] };
    const result = planPrune(ledger, plan, {
      windowTokens: 50_000,
      thresholdTokens: 5_000,
      fixedTokens: FIXED,
    });
    expect(result.plan.stubSeqs).toEqual([out[0], out[1]]);
    expect(result.stubbed).toEqual([out[0]]);
  });

  it('gives the same plan when run again on its own result', () => {
    const { ledger } = conversation({ tokens: 10_000 }, { tokens: 8_000, spooled: true });
    const options = { windowTokens: WINDOW, thresholdTokens: 1_000, fixedTokens: FIXED };
    const once = planPrune(ledger, initialContextPlan(1), options);
    const twice = planPrune(ledger, once.plan, options);
    expect(twice.plan).toEqual(once.plan);
    expect(twice.stubbed).toEqual([]);
    expect(twice.elided).toEqual([]);
  });

  it('prunes only the tail after a summary', () => {
    const builder = new LedgerBuilder();
    builder.first(200);
    const old = builder.exchange([{ tokens: 9_000, spooled: true }]);
    const later = builder.exchange([{ tokens: 9_000, spooled: true }]);
    for (let i = 0; i < 3; i++) builder.exchange([small]);
    const plan = { ...initialContextPlan(1), fromSeq: later.assistantSeq };
    const result = planPrune(builder.entries, plan, { windowTokens: 0, thresholdTokens: 0, fixedTokens: 0 });
    expect(result.stubbed).toEqual(later.resultSeqs);
    expect(result.plan.stubSeqs).not.toContain(old.resultSeqs[0]);
  });
});
