/**
 * Issue 9.1: every compaction keeps every fact. Over generated goals and sequences of compactions of
 * every kind — auto, manual, forced, recovery after an overflow (with the summarizer working or failing),
 * a failed summarizer, a worker that dies after storing a summary, a summary that says it dropped the
 * earlier one, pruning only — every fact line of any
 * summary that was ever in context is still in context afterwards. The summarizer is a fake that keeps
 * the fact lines it is shown, so a fact can only disappear if the planning fails to show it the earlier
 * summary (or the fallback fails to carry it).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { factsIn, outputOf, type SimCompactRequest, SimGoal, type SummarizerBehaviour } from './goal-sim';

type Compaction =
  | 'auto'
  | 'manual'
  | 'forced'
  | 'recovery'
  | 'recovery-failing'
  | 'failing'
  | 'crash'
  | 'dropping'
  | 'prune-only';

type Op =
  | { kind: 'step'; tokens: number; fact: boolean; ok: boolean }
  | { kind: 'steer'; fact: boolean }
  | { kind: 'compact'; how: Compaction };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('step' as const),
      tokens: fc.oneof(fc.integer({ min: 20, max: 400 }), fc.integer({ min: 501, max: 3_500 })),
      fact: fc.boolean(),
      ok: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('steer' as const), fact: fc.boolean() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('compact' as const),
      how: fc.constantFrom<Compaction>(
        'auto',
        'manual',
        'forced',
        'recovery',
        'recovery-failing',
        'failing',
        'crash',
        'dropping',
        'prune-only',
      ),
    }),
  },
);

/** What each kind of compaction asks for, and how the summarizer behaves for it. */
const KINDS: Record<Exclude<Compaction, 'auto'>, [SimCompactRequest, SummarizerBehaviour]> = {
  manual: [{ manual: true }, 'ok'],
  forced: [{ forced: true }, 'ok'],
  recovery: [{ forced: true, recovery: true }, 'ok'],
  'recovery-failing': [{ forced: true, recovery: true }, 'fail'],
  failing: [{}, 'fail'],
  crash: [{ manual: true }, 'crash-after-store'],
  dropping: [{ manual: true }, 'drops-previous'],
  'prune-only': [{ pruneOnly: true }, 'ok'],
};

async function run(goal: SimGoal, op: Op, facts: { n: number }): Promise<void> {
  if (op.kind === 'step') {
    const lines = op.fact ? [`FACT-${++facts.n}: ERROR E${facts.n} in /srv/app/config-${facts.n}.yaml`] : [];
    goal.step(outputOf(op.tokens, `s${goal.steps + 1}`, lines), { ok: op.ok });
  } else if (op.kind === 'steer') {
    goal.steer(op.fact ? `please also FACT-${++facts.n}: keep the API stable` : 'carry on');
  } else if (op.how === 'auto') {
    await goal.beforeStep();
  } else {
    const [request, behaviour] = KINDS[op.how];
    goal.next = behaviour;
    await goal.compact(request);
  }
}

/** Every fact line of every summary applied so far that the context no longer holds. */
function lostFacts(goal: SimGoal): string[] {
  const inContext = new Set(factsIn(goal.contextText()));
  return [...new Set(goal.appliedSummaries.flatMap(factsIn))].filter((fact) => !inContext.has(fact));
}

describe('every compaction keeps every fact of every summary', () => {
  it('holds over generated goals and sequences of compactions of every kind', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(8_000, 12_000, 16_000, 20_000, 32_000),
        fc.integer({ min: 300, max: 3_000 }),
        fc.array(opArb, { minLength: 10, maxLength: 70 }),
        async (windowTokens, fixedTokens, ops) => {
          const goal = new SimGoal({ windowTokens, fixedTokens });
          const facts = { n: 0 };
          for (const op of ops) {
            await run(goal, op, facts);
            expect(lostFacts(goal)).toEqual([]);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a recovery compaction right after an auto compaction merges the earlier summary (the reported loss)', async () => {
    // Issue 9.1 as reported: the span of the recovery is older than the earlier summary's own seq.
    const goal = new SimGoal({ windowTokens: 20_000, fixedTokens: 2_000 });
    goal.step(outputOf(300, 's1', ['FACT-1: ERROR E4711: widget exploded']));
    for (let step = 2; step <= 12; step++) goal.step(outputOf(1_200, `s${step}`));
    expect(await goal.compact({ manual: true })).toBe('summarized');
    expect(factsIn(goal.appliedSummaries[0])).toContain('FACT-1: ERROR E4711: widget exploded');
    for (let round = 0; round < 4; round++) {
      expect(await goal.compact({ forced: true, recovery: true })).not.toBe('failed');
      expect(factsIn(goal.contextText())).toContain('FACT-1: ERROR E4711: widget exploded');
    }
    const merged = goal.summarizerInputs.slice(1);
    expect(merged.length).toBeGreaterThan(0);
    for (const input of merged) {
      expect(input).toContain('# Earlier summary to merge');
      expect(input).toContain('FACT-1: ERROR E4711: widget exploded');
    }
  });

  it('the extracted fallback carries the earlier summary when the summarizer fails during recovery', async () => {
    const goal = new SimGoal({ windowTokens: 16_000, fixedTokens: 1_500 });
    goal.step(outputOf(200, 's1', ['FACT-1: config at /etc/widget.yaml']));
    for (let step = 2; step <= 10; step++) goal.step(outputOf(800, `s${step}`));
    await goal.compact({ manual: true });
    for (let step = 11; step <= 16; step++) goal.step(outputOf(800, `s${step}`));
    goal.next = 'fail';
    expect(await goal.compact({ forced: true, recovery: true })).toBe('summarized');
    const extracted = goal.appliedSummaries.at(-1)!;
    expect(extracted).toContain('Extracted from the transcript without a model');
    expect(extracted).toContain('FACT-1: config at /etc/widget.yaml');
  });

  it('after a worker dies with a summary stored, the next compaction neither reuses it for another span nor loses facts', async () => {
    const goal = new SimGoal({ windowTokens: 16_000, fixedTokens: 1_500 });
    for (let step = 1; step <= 8; step++) goal.step(outputOf(600, `s${step}`));
    goal.next = 'crash-after-store';
    expect(await goal.compact({ manual: true })).toBe('failed');
    goal.step(outputOf(300, 's9', ['FACT-9: ERROR E9 after the crash']));
    for (let step = 10; step <= 13; step++) goal.step(outputOf(600, `s${step}`));
    expect(await goal.compact({ manual: true })).toBe('summarized');
    // The stale summary covered a shorter span; a new one was written under its own key.
    expect(goal.transcript.filter((entry) => entry.key.startsWith('summary:1')).map((e) => e.key)).toEqual([
      'summary:1',
      expect.stringMatching(/^summary:1~\d+-\d+$/),
    ]);
    expect(goal.appliedSummaries.at(-1)).toContain('FACT-9: ERROR E9 after the crash');
  });

  it('refuses a summary that says it dropped the earlier one: the earlier summary stays, the failure counts', async () => {
    // The check workflows/compaction.ts makes on the activity's carriesPrevious, run by the simulator too.
    const goal = new SimGoal({ windowTokens: 16_000, fixedTokens: 1_500 });
    goal.step(outputOf(200, 's1', ['FACT-1: config at /etc/widget.yaml']));
    for (let step = 2; step <= 10; step++) goal.step(outputOf(800, `s${step}`));
    expect(await goal.compact({ manual: true })).toBe('summarized');
    const earlier = goal.compaction.plan.summarySeq;
    expect(earlier).toBeDefined();
    for (let step = 11; step <= 16; step++) goal.step(outputOf(800, `s${step}`));
    goal.next = 'drops-previous';
    expect(await goal.compact({ manual: true })).toBe('failed');
    expect(goal.compaction.plan.summarySeq).toBe(earlier);
    expect(goal.appliedSummaries).toHaveLength(1);
    expect(goal.compaction.autoCompact.consecutiveFailures).toBe(1);
    expect(goal.notices.at(-1)).toContain('the new summary did not carry the earlier one');
    expect(factsIn(goal.contextText())).toContain('FACT-1: config at /etc/widget.yaml');
    // The next summary that carries it is applied.
    expect(await goal.compact({ manual: true })).toBe('summarized');
    expect(goal.compaction.autoCompact.consecutiveFailures).toBe(0);
    expect(factsIn(goal.appliedSummaries.at(-1)!)).toContain('FACT-1: config at /etc/widget.yaml');
  });
});
