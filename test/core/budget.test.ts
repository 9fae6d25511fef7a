import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AutoCompactStatus,
  classifyBudget,
  computeBudget,
  DEFAULT_COMPACT_THRESHOLD_PCT,
  gaugeLevel,
  policyView,
  renderPolicy,
} from '../../core/budget';
import { ConfigError } from '../../core/errors';
import { GENERIC_CARD, type ModelCard } from '../../core/model-card';

function card(overrides: Partial<ModelCard> = {}): ModelCard {
  return {
    provider: 'openai',
    model: 'test-model',
    advertisedContextTokens: 128_000,
    maxOutputTokens: 16_384,
    prices: { inputPerMTok: 1, outputPerMTok: 2, cacheReadPerMTok: 0.5, cacheWritePerMTok: 1 },
    ...overrides,
  };
}

const AUTO_ON: AutoCompactStatus = { enabled: true, failures: 0, maxFailures: 3, paused: false };

describe('computeBudget', () => {
  it('enforces the provider-reported window first, then the guaranteed, then the advertised', () => {
    const guaranteed = card({ advertisedContextTokens: 131_072, guaranteedContextTokens: 8_192 });
    expect(computeBudget({ card: guaranteed, providerReportedContextTokens: 32_768 })).toMatchObject({
      windowTokens: 32_768,
      windowSource: 'provider-reported',
    });
    expect(computeBudget({ card: guaranteed })).toMatchObject({
      windowTokens: 8_192,
      windowSource: 'guaranteed',
    });
    expect(computeBudget({ card: card() })).toMatchObject({
      windowTokens: 128_000,
      windowSource: 'advertised',
    });
  });

  it('ignores a provider-reported window that is not a positive integer', () => {
    for (const reported of [0, -1, Number.NaN, 1.5]) {
      expect(computeBudget({ card: card(), providerReportedContextTokens: reported }).windowSource).toBe(
        'advertised',
      );
    }
  });

  it('reserves the output ceiling, capped at 25 % of the window', () => {
    // 16384 is under a quarter of 128000: the whole ceiling is reserved.
    expect(computeBudget({ card: card() })).toMatchObject({
      outputReserveTokens: 16_384,
      usableInputTokens: 128_000 - 16_384,
    });
    // A 64k ceiling on a 200k window would leave too little input: the reserve is capped at 50k.
    expect(
      computeBudget({ card: card({ advertisedContextTokens: 200_000, maxOutputTokens: 64_000 }) }),
    ).toMatchObject({ outputReserveTokens: 50_000, usableInputTokens: 150_000 });
  });

  it('puts warn at 75 %, compact at the threshold percentage and stop at the usable input', () => {
    const budget = computeBudget({
      card: card({ advertisedContextTokens: 200_000, maxOutputTokens: 64_000 }),
    });
    expect(budget).toMatchObject({
      warnAtTokens: 112_500,
      compactAtTokens: 127_500,
      compactThresholdPct: DEFAULT_COMPACT_THRESHOLD_PCT,
      stopAtTokens: 150_000,
    });
    expect(computeBudget({ card: card() }, 60)).toMatchObject({
      compactAtTokens: Math.floor((111_616 * 60) / 100),
      // Under the warn level the warn band is empty rather than inverted.
      warnAtTokens: Math.floor((111_616 * 60) / 100),
    });
  });

  it('keeps warn <= compact <= stop <= window for any card and threshold', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_000, max: 2_000_000 }),
        fc.integer({ min: 1, max: 200_000 }),
        fc.option(fc.integer({ min: 1, max: 2_000_000 }), { nil: undefined }),
        fc.integer({ min: 1, max: 100 }),
        (window, maxOutput, reported, pct) => {
          const modelCard = card({
            advertisedContextTokens: window,
            maxOutputTokens: Math.min(maxOutput, window),
          });
          const budgets = [
            computeBudget({ card: modelCard }, pct),
            computeBudget({ card: modelCard, providerReportedContextTokens: reported }, pct),
          ];
          for (const b of budgets) {
            expect(b.warnAtTokens).toBeLessThanOrEqual(b.compactAtTokens);
            expect(b.compactAtTokens).toBeLessThanOrEqual(b.stopAtTokens);
            expect(b.stopAtTokens).toBe(b.usableInputTokens);
            expect(b.usableInputTokens + b.outputReserveTokens).toBe(b.windowTokens);
            expect(b.outputReserveTokens * 4).toBeLessThanOrEqual(b.windowTokens);
          }
        },
      ),
    );
  });

  it('budgets the generic card conservatively', () => {
    expect(computeBudget({ card: GENERIC_CARD })).toMatchObject({
      windowTokens: 32_000,
      outputReserveTokens: 4_000,
      usableInputTokens: 28_000,
    });
  });

  it('rejects a threshold percentage outside (0, 100]', () => {
    for (const pct of [0, -5, 101, Number.NaN]) {
      expect(() => computeBudget({ card: card() }, pct)).toThrow(ConfigError);
    }
    expect(() => computeBudget({ card: card() }, 100)).not.toThrow();
  });
});

describe('classifyBudget', () => {
  const budget = computeBudget({ card: card({ advertisedContextTokens: 100_000, maxOutputTokens: 20_000 }) });
  // usable 80000: warn 60000, compact 68000, stop above 80000.

  it('maps each band to its state, boundaries included where the spec says "at or above"', () => {
    expect(classifyBudget(0, budget)).toBe('normal');
    expect(classifyBudget(59_999, budget)).toBe('normal');
    expect(classifyBudget(60_000, budget)).toBe('warn');
    expect(classifyBudget(67_999, budget)).toBe('warn');
    expect(classifyBudget(68_000, budget)).toBe('compact');
    // Still inside the hard input budget.
    expect(classifyBudget(80_000, budget)).toBe('compact');
    expect(classifyBudget(80_001, budget)).toBe('stop');
  });

  it('never goes back down as the estimate grows', () => {
    const order = ['normal', 'warn', 'compact', 'stop'];
    fc.assert(
      fc.property(fc.nat(200_000), fc.nat(200_000), (a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        expect(order.indexOf(classifyBudget(low, budget))).toBeLessThanOrEqual(
          order.indexOf(classifyBudget(high, budget)),
        );
      }),
    );
  });
});

describe('gaugeLevel', () => {
  it('turns yellow at 75 % and red at 90 %', () => {
    expect(gaugeLevel(74_999, 100_000)).toBe('green');
    expect(gaugeLevel(75_000, 100_000)).toBe('yellow');
    expect(gaugeLevel(89_999, 100_000)).toBe('yellow');
    expect(gaugeLevel(90_000, 100_000)).toBe('red');
    expect(gaugeLevel(150_000, 100_000)).toBe('red');
  });

  it('calls an empty window red', () => {
    expect(gaugeLevel(0, 0)).toBe('red');
  });

  it('agrees with the warn threshold: yellow exactly when the policy warns or worse', () => {
    const budget = computeBudget({ card: card() });
    for (const used of [budget.warnAtTokens - 1, budget.warnAtTokens]) {
      const warns = classifyBudget(used, budget) !== 'normal';
      expect(gaugeLevel(used, budget.usableInputTokens) !== 'green').toBe(warns);
    }
  });
});

describe('policyView and renderPolicy', () => {
  const budget = computeBudget({ card: card({ advertisedContextTokens: 100_000, maxOutputTokens: 20_000 }) });

  it('reports window, threshold, use, status and the failure counter', () => {
    const view = policyView({ budget, usedTokens: 32_000, autoCompact: AUTO_ON });
    expect(view).toEqual({
      windowTokens: 100_000,
      windowSource: 'advertised',
      outputReserveTokens: 20_000,
      usableInputTokens: 80_000,
      thresholdTokens: 68_000,
      thresholdPct: 85,
      usedTokens: 32_000,
      usedPct: 40,
      state: 'normal',
      gauge: 'green',
      autoCompact: 'on',
      failures: 0,
      maxFailures: 3,
    });
  });

  it('renders the spec layout', () => {
    const text = renderPolicy(policyView({ budget, usedTokens: 32_000, autoCompact: AUTO_ON }));
    expect(text).toBe(
      [
        'context window:  100000 tokens (advertised; 80000 usable input, 20000 reserved for output)',
        'threshold:       68000 tokens (85 % of usable input)',
        'currently used:  32000 tokens',
        'status:          OK (40%)',
        '',
        'auto-compact:    on',
        'failures:        0 / 3',
      ].join('\n'),
    );
  });

  it('shows warning, over-threshold and over-budget states, and paused or disabled auto-compact', () => {
    const at = (used: number, autoCompact: AutoCompactStatus = AUTO_ON) =>
      renderPolicy(policyView({ budget, usedTokens: used, autoCompact }));
    expect(at(60_000)).toContain('status:          WARNING (75%)');
    expect(at(72_000)).toContain('status:          OVER THRESHOLD (90%)');
    expect(at(90_000)).toContain('status:          OVER BUDGET (113%)');
    const paused = at(72_000, { enabled: true, failures: 3, maxFailures: 3, paused: true });
    expect(paused).toContain('auto-compact:    paused');
    expect(paused).toContain('failures:        3 / 3');
    expect(at(0, { ...AUTO_ON, enabled: false })).toContain('auto-compact:    off');
  });
});
