import { describe, expect, it } from 'vitest';
import {
  addToBreakdown,
  breakdownTotal,
  costOf,
  mergeBreakdowns,
  renderStats,
  type UsageBreakdown,
} from '../../core/cost';
import { GENERIC_CARD, type ModelCard } from '../../core/model-card';
import { addRequestUsage, EMPTY_USAGE, type RequestUsage } from '../../core/usage';

const SONNET: ModelCard = {
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  advertisedContextTokens: 200_000,
  maxOutputTokens: 64_000,
  prices: { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 },
};

const MINI: ModelCard = {
  provider: 'openai',
  model: 'gpt-4o-mini',
  advertisedContextTokens: 128_000,
  maxOutputTokens: 16_384,
  prices: { inputPerMTok: 0.15, outputPerMTok: 0.6, cacheReadPerMTok: 0.075, cacheWritePerMTok: 0.15 },
};

function usage(input: number, output: number, cacheRead = 0, cacheWrite = 0): RequestUsage {
  return {
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
  };
}

describe('costOf', () => {
  it('prices input, output, cache reads and cache writes per million tokens', () => {
    expect(costOf(usage(1_000_000, 0), SONNET)).toBeCloseTo(3);
    expect(costOf(usage(0, 1_000_000), SONNET)).toBeCloseTo(15);
    // 100k input of which 60k from the cache and 30k written to it: 10k plain input.
    const cost = costOf(usage(100_000, 2_000, 60_000, 30_000), SONNET);
    expect(cost).toBeCloseTo((10_000 * 3 + 60_000 * 0.3 + 30_000 * 3.75 + 2_000 * 15) / 1_000_000, 10);
  });

  it('never charges negative plain input when a provider reports input without its cached part', () => {
    expect(costOf(usage(100, 10, 1_000), SONNET)).toBeCloseTo((1_000 * 0.3 + 10 * 15) / 1_000_000, 10);
  });

  it('prices cache entries written for an hour at the 1-hour write price, when the card has one', () => {
    const hourCard = { ...SONNET, prices: { ...SONNET.prices, cacheWrite1hPerMTok: 6 } };
    const written = { ...usage(50_000, 0, 0, 40_000), cacheWrite1hTokens: 30_000 };
    expect(costOf(written, hourCard)).toBeCloseTo((10_000 * 3 + 10_000 * 3.75 + 30_000 * 6) / 1_000_000, 10);
    // A card without the 1-hour price falls back to the write price.
    expect(costOf(written, SONNET)).toBeCloseTo((10_000 * 3 + 40_000 * 3.75) / 1_000_000, 10);
  });

  it('is 0 for the generic card, which has no prices', () => {
    expect(costOf(usage(50_000, 5_000), GENERIC_CARD)).toBe(0);
  });
});

describe('addToBreakdown', () => {
  it('adds requests per model without mutating the breakdown it was given', () => {
    const empty: UsageBreakdown = {};
    const one = addToBreakdown(empty, 'anthropic:claude-sonnet-4-5', usage(1_000, 100), {
      summarizer: false,
      card: SONNET,
    });
    const two = addToBreakdown(one, 'openai:gpt-4o-mini', usage(2_000, 200, 1_000), {
      summarizer: false,
      card: MINI,
    });
    expect(empty).toEqual({});
    expect(Object.keys(one)).toEqual(['anthropic:claude-sonnet-4-5']);
    expect(two['anthropic:claude-sonnet-4-5']).toEqual(one['anthropic:claude-sonnet-4-5']);
    expect(two['openai:gpt-4o-mini']).toMatchObject({
      requests: 1,
      inputTokens: 2_000,
      outputTokens: 200,
      cacheReadTokens: 1_000,
      cacheWriteTokens: 0,
      summarizerRequests: 0,
      unpricedRequests: 0,
    });
  });

  it('counts a summarizer call once in the totals and again only in its sub-total', () => {
    let breakdown: UsageBreakdown = {};
    const step = usage(40_000, 1_000);
    const summary = usage(30_000, 2_000);
    breakdown = addToBreakdown(breakdown, 'anthropic:claude-sonnet-4-5', step, {
      summarizer: false,
      card: SONNET,
    });
    breakdown = addToBreakdown(breakdown, 'anthropic:claude-sonnet-4-5', summary, {
      summarizer: true,
      card: SONNET,
    });
    const model = breakdown['anthropic:claude-sonnet-4-5'];
    expect(model.requests).toBe(2);
    expect(model.inputTokens).toBe(70_000);
    expect(model.costUsd).toBeCloseTo(costOf(step, SONNET) + costOf(summary, SONNET), 10);
    expect(model.summarizerRequests).toBe(1);
    expect(model.summarizer).toEqual({
      inputTokens: 30_000,
      outputTokens: 2_000,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: costOf(summary, SONNET),
    });
    // The total over models is the sum of the per-model totals: the sub-total is not added again.
    expect(breakdownTotal(breakdown).costUsd).toBeCloseTo(model.costUsd, 10);
  });

  it('counts requests under the generic card as unpriced', () => {
    const breakdown = addToBreakdown({}, 'scripted:/tmp/s.json', usage(10, 10), {
      summarizer: false,
      card: GENERIC_CARD,
    });
    expect(breakdown['scripted:/tmp/s.json']).toMatchObject({ requests: 1, unpricedRequests: 1, costUsd: 0 });
  });
});

describe('mergeBreakdowns and breakdownTotal', () => {
  it('folds an operation breakdown into the session breakdown', () => {
    const session = addToBreakdown({}, 'openai:gpt-4o-mini', usage(1_000, 10), {
      summarizer: false,
      card: MINI,
    });
    let operation: UsageBreakdown = {};
    operation = addToBreakdown(operation, 'openai:gpt-4o-mini', usage(2_000, 20), {
      summarizer: false,
      card: MINI,
    });
    operation = addToBreakdown(operation, 'anthropic:claude-sonnet-4-5', usage(5_000, 500), {
      summarizer: true,
      card: SONNET,
    });
    const merged = mergeBreakdowns(session, operation);
    expect(merged['openai:gpt-4o-mini']).toMatchObject({ requests: 2, inputTokens: 3_000, outputTokens: 30 });
    expect(merged['anthropic:claude-sonnet-4-5']).toMatchObject({ requests: 1, summarizerRequests: 1 });
    const total = breakdownTotal(merged);
    expect(total).toMatchObject({
      requests: 3,
      inputTokens: 8_000,
      outputTokens: 530,
      summarizerRequests: 1,
    });
    expect(total.costUsd).toBeCloseTo(costOf(usage(3_000, 30), MINI) + costOf(usage(5_000, 500), SONNET), 10);
    expect(session['openai:gpt-4o-mini'].requests).toBe(1);
  });

  it('totals an empty breakdown to zero', () => {
    expect(breakdownTotal({})).toMatchObject({ requests: 0, costUsd: 0, summarizerRequests: 0 });
  });
});

describe('renderStats', () => {
  it('shows the counters, the cost and one row per model with the summarizer share', () => {
    const requests: [string, RequestUsage, boolean, ModelCard][] = [
      ['anthropic:claude-sonnet-4-5', usage(40_000, 1_000, 30_000, 5_000), false, SONNET],
      ['anthropic:claude-sonnet-4-5', usage(30_000, 2_000), true, SONNET],
      ['openai:gpt-4o-mini', usage(2_000, 100), false, MINI],
    ];
    let breakdown: UsageBreakdown = {};
    let totals = EMPTY_USAGE;
    for (const [model, u, summarizer, modelCard] of requests) {
      breakdown = addToBreakdown(breakdown, model, u, { summarizer, card: modelCard });
      totals = addRequestUsage(totals, u);
    }
    const text = renderStats(breakdown, totals);
    const cost = breakdownTotal(breakdown).costUsd;
    expect(text).toContain('requests:         3');
    expect(text).toContain('input tokens:     72000');
    expect(text).toContain('output tokens:    3100');
    expect(text).toContain('cache read:       30000');
    expect(text).toContain('cache write:      5000');
    expect(text).toContain('largest request:  41000 tokens');
    expect(text).toContain(`cost:             $${cost.toFixed(4)} (summarizer: 1 request, $0.1200)`);
    const table = text.split('per model:\n')[1].split('\n');
    expect(table[0]).toMatch(/^ {2}model\s+requests\s+input\s+output\s+cache read\s+cache write\s+cost$/);
    expect(table[1]).toMatch(
      /^ {2}anthropic:claude-sonnet-4-5\s+2\s+70000\s+3000\s+30000\s+5000\s+\$\d+\.\d{4}$/,
    );
    expect(table[2]).toMatch(/^ {4}of which summarizer\s+1\s+30000\s+2000\s+0\s+0\s+\$0\.1200$/);
    expect(table[3]).toMatch(/^ {2}openai:gpt-4o-mini\s+1\s+2000\s+100/);
    expect(text).not.toContain('without a model card');
  });

  it('marks costs that leave out unpriced requests', () => {
    const breakdown = addToBreakdown({}, 'openai-compatible:local', usage(100, 10), {
      summarizer: false,
      card: GENERIC_CARD,
    });
    const text = renderStats(breakdown, addRequestUsage(EMPTY_USAGE, usage(100, 10)));
    expect(text).toContain('cost:             $0.0000*');
    expect(text).toContain(
      '* 1 request to models without a model card: their cost is unknown and not included',
    );
  });

  it('has no model table before the first request', () => {
    const text = renderStats({}, EMPTY_USAGE);
    expect(text).toContain('requests:         0');
    expect(text).not.toContain('per model:');
  });
});
