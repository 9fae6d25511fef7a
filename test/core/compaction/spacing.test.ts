/**
 * Issue 9.2: no thrashing. With tool outputs of a fixed size, every compaction lands under the
 * low-water mark (or says why it cannot), so the steps between two compactions are at least
 * (threshold − low water) ÷ growth per step − 1, no compaction is forced unless one step outgrows the
 * band between threshold and hard limit, and the summarizer is called at most once per four model steps. Figures for each size are printed, with the legacy rules beside
 * them: those wait until the hard limit and then compact, forced, every step or two.
 */
import { describe, expect, it } from 'vitest';
import { ledgerTokens } from '../../../core/ledger';
import { estimateTokens } from '../../../core/tokens';
import { outputOf, SimGoal } from './goal-sim';

interface Case {
  windowTokens: number;
  outputKb: number;
  fixedTokens: number;
}

/** Runs a goal of fixed-size outputs long enough for several compactions. */
async function runGoal(c: Case, legacy = false) {
  const goal = new SimGoal({ windowTokens: c.windowTokens, fixedTokens: c.fixedTokens, legacy });
  const outputTokens = Math.round((c.outputKb * 1024) / 3.3);
  const before = ledgerTokens(goal.ledger);
  goal.step(outputOf(outputTokens, 's1'));
  const growth = ledgerTokens(goal.ledger) - before;
  const { thresholdTokens, targetTokens } = goal.targets;
  const band = (thresholdTokens - targetTokens) / growth;
  const steps = Math.min(600, Math.ceil(thresholdTokens / growth + 8 * Math.max(1, band) + 20));
  for (let step = 2; step <= steps; step++) {
    await goal.beforeStep();
    goal.step(outputOf(outputTokens, `s${step}`));
  }
  const gaps = goal.compactedAt.slice(1).map((at, index) => at - goal.compactedAt[index]);
  return { goal, growth, band, steps, gaps };
}

const CASES: Case[] = [];
for (const windowTokens of [12_000, 16_000, 20_000, 32_000, 128_000]) {
  for (const outputKb of [2, 4, 6, 8]) {
    for (const fixedTokens of [1_500, 3_000]) CASES.push({ windowTokens, outputKb, fixedTokens });
  }
}

/**
 * Whether the mark can be reached at all: the system prompt, the newest (unseen) exchange and a few
 * stubs must fit under it. Where they cannot, the notice says why and no spacing is promised.
 */
function reachable(goal: SimGoal, growth: number): boolean {
  return goal.options.fixedTokens + growth + 1_500 < goal.targets.targetTokens;
}

describe('compaction spacing with outputs of a fixed size', () => {
  it.each(CASES)('window $windowTokens, outputs $outputKb KB, fixed $fixedTokens', async (c) => {
    const { goal, growth, band, steps, gaps } = await runGoal(c);
    const legacy = await runGoal(c, true);
    const forced = (g: SimGoal) => g.decisions.filter((action) => action === 'forced').length;
    console.log(
      `window ${c.windowTokens} out ${c.outputKb}KB fixed ${c.fixedTokens}: growth ${growth}/step, ` +
        `threshold ${goal.targets.thresholdTokens}, low water ${goal.targets.targetTokens}; ${steps} steps: ` +
        `${goal.compactedAt.length} compactions (min gap ${Math.min(...gaps)}, bound ${(band - 1).toFixed(2)}), ` +
        `${goal.summarizerCalls} summarizer calls (${(goal.summarizerCalls / steps).toFixed(3)}/step), ` +
        `${forced(goal)} forced | legacy: ${legacy.goal.compactedAt.length} compactions, ` +
        `${legacy.goal.summarizerCalls} summarizer calls, ${forced(legacy.goal)} forced`,
    );
    expect(goal.compactedAt.length).toBeGreaterThanOrEqual(3);
    if (!reachable(goal, growth)) return;
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(band - 1);
    // One step can jump from under the threshold to over the hard limit only when it adds more than the
    // band between them; then that compaction is forced, which is right: the request would not fit.
    const { thresholdTokens, hardLimitTokens } = goal.targets;
    if (growth < hardLimitTokens - thresholdTokens) expect(forced(goal)).toBe(0);
    expect(goal.summarizerCalls / steps).toBeLessThanOrEqual(1 / 4);
  });

  it('the grid has enough cases where the mark is reachable for the bound to mean something', async () => {
    let checked = 0;
    for (const c of CASES) {
      const goal = new SimGoal({ windowTokens: c.windowTokens, fixedTokens: c.fixedTokens });
      const growth = estimateTokens(outputOf(Math.round((c.outputKb * 1024) / 3.3), 'x')) + 30;
      if (reachable(goal, growth)) checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(CASES.length / 2);
  });
});
