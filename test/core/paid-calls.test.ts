import { describe, expect, it } from 'vitest';
import { addToBreakdown, breakdownTotal, costOf, renderStats } from '../../core/cost';
import { GENERIC_CARD, type ModelCard } from '../../core/model-card';
import {
  billedAttempt,
  callPricing,
  mergeBilled,
  paidCallKeys,
  sumBilled,
  withBilledAttempts,
  worstCaseUsage,
} from '../../core/paid-calls';
import { reservationFor, spentOf } from '../../core/spend-cap';
import { addRequestUsage, EMPTY_USAGE } from '../../core/usage';

const PRICED: ModelCard = {
  provider: 'openai-compatible',
  model: 'priced-model',
  advertisedContextTokens: 128_000,
  maxOutputTokens: 1_000,
  prices: { inputPerMTok: 2, outputPerMTok: 10, cacheReadPerMTok: 1, cacheWritePerMTok: 2 },
};

const usage = (input: number, output: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

describe('billed attempts', () => {
  it('cost exactly the reservation when the provider reported no usage', () => {
    const pricing = callPricing(PRICED, 4_321.2);
    const record = billedAttempt(null, pricing);
    const reservation = reservationFor(PRICED, 4_321.2);
    expect(record.atReservation).toBe(true);
    expect(record.costUsd).toBeCloseTo(reservation.costUsd, 12);
    expect(record.usage.inputTokens + record.usage.outputTokens).toBe(reservation.tokens);
  });

  it('cost their reported usage when there is one', () => {
    const record = billedAttempt(usage(500, 200), callPricing(PRICED, 10_000));
    expect(record).toEqual({
      usage: usage(500, 200),
      costUsd: costOf(usage(500, 200), PRICED),
      atReservation: false,
    });
  });

  it('cost nothing on a model without a card, but still count their tokens', () => {
    const record = billedAttempt(null, callPricing(null, 100));
    expect(record.costUsd).toBe(0);
    expect(record.usage).toEqual(worstCaseUsage(null, 100));
    expect(record.usage.outputTokens).toBe(GENERIC_CARD.maxOutputTokens);
  });

  it('add up, and two sums merge', () => {
    const pricing = callPricing(PRICED, 1_000);
    const a = sumBilled([billedAttempt(null, pricing), billedAttempt(usage(10, 20), pricing)]);
    expect(a).toMatchObject({ attempts: 2, atReservation: 1 });
    expect(a?.costUsd).toBeCloseTo(reservationFor(PRICED, 1_000).costUsd + costOf(usage(10, 20), PRICED), 12);
    expect(sumBilled([])).toBeNull();
    const b = sumBilled([billedAttempt(null, pricing)]);
    expect(mergeBilled(a, b)).toMatchObject({ attempts: 3, atReservation: 2 });
    expect(mergeBilled(null, b)).toBe(b);
  });

  it('count against the goal: spent money and tokens, requests, a retries sub-total stats shows', () => {
    const answer = usage(400, 1_000);
    let state = {
      breakdown: addToBreakdown({}, 'm', answer, { summarizer: false, card: PRICED }),
      usage: addRequestUsage(EMPTY_USAGE, answer),
    };
    const before = spentOf(state);
    const billed = sumBilled([billedAttempt(null, callPricing(PRICED, 400))]);
    state = withBilledAttempts(state, 'm', billed, PRICED);
    const after = spentOf(state);
    expect(after.costUsd - before.costUsd).toBeCloseTo(reservationFor(PRICED, 400).costUsd, 12);
    expect(after.tokens - before.tokens).toBe(reservationFor(PRICED, 400).tokens);
    expect(state.usage.requests).toBe(2);
    // The largest request stays the answered one: a billed attempt is no context the model saw.
    expect(state.usage.contextTokens).toBe(1_400);
    expect(breakdownTotal(state.breakdown).retries).toMatchObject({ requests: 1, atReservation: 1 });
    const text = renderStats(state.breakdown, state.usage);
    expect(text).toContain(
      `retries:          1 attempt, $${reservationFor(PRICED, 400).costUsd.toFixed(4)} (1 at its reservation: no usage reported)`,
    );
    expect(text).toMatch(/ {4}of which retries\s+1\s+400\s+1000\s+0\s+0\s+\$0\.0108/);
    // Nothing billed: the state is unchanged, and stats says nothing of retries.
    expect(withBilledAttempts(state, 'm', null, PRICED)).toBe(state);
    expect(renderStats({}, EMPTY_USAGE)).not.toContain('retries');
  });

  it('have keys unique per activity and attempt, and prefixes that take only their own', () => {
    expect(paidCallKeys.attempt('run/1', 2).startsWith(paidCallKeys.attempts('run/1'))).toBe(true);
    expect(paidCallKeys.attempt('run/12', 2).startsWith(paidCallKeys.attempts('run/1'))).toBe(false);
    expect(paidCallKeys.summary('run/3', 1).startsWith(paidCallKeys.summaries('run/3'))).toBe(true);
    expect(paidCallKeys.answer('a:2:1')).not.toBe(paidCallKeys.attempt('a', 1));
  });
});
