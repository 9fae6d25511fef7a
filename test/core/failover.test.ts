import { describe, expect, it } from 'vitest';
import { FailureType } from '../../core/errors';
import {
  DEFAULT_FAILOVER_AFTER_FAILURES,
  failoverDue,
  isFailoverReason,
  NO_FAILURES,
  nextFailureRun,
  primaryAnswered,
  probeDue,
  probingPrimary,
  stepFailoverRule,
  switchedToBackup,
} from '../../core/failover';
import { stepsPerModel } from '../../core/failover-stats';

const rule = { afterFailures: 3, afterMinutes: 5 };

describe('failover rule', () => {
  it('counts overloaded, failing and unreachable servers as reasons to switch', () => {
    expect(isFailoverReason(FailureType.ProviderUnavailable, 529)).toBe(true);
    expect(isFailoverReason(FailureType.ProviderUnavailable, 503)).toBe(true);
    expect(isFailoverReason(FailureType.ProviderUnavailable, 500)).toBe(true);
    // No status: a network error or a stream that broke mid-answer.
    expect(isFailoverReason(FailureType.ProviderUnavailable, undefined)).toBe(true);
    expect(isFailoverReason(FailureType.ProviderStalled)).toBe(true);
    expect(isFailoverReason(FailureType.ProviderUnreachable)).toBe(true);
  });

  it('never switches for a bad request, refused credentials, a context overflow, a rate limit or a quota', () => {
    expect(isFailoverReason(FailureType.ProviderBadRequest, 400)).toBe(false);
    expect(isFailoverReason(FailureType.ProviderAuth, 401)).toBe(false);
    expect(isFailoverReason(FailureType.ProviderAuth, 403)).toBe(false);
    expect(isFailoverReason(FailureType.ContextOverflow, 400)).toBe(false);
    expect(isFailoverReason(FailureType.ProviderUnavailable, 429)).toBe(false);
    expect(isFailoverReason(FailureType.QuotaExhausted, 429)).toBe(false);
    expect(isFailoverReason(FailureType.StoreUnavailable)).toBe(false);
    expect(isFailoverReason(undefined)).toBe(false);
  });

  it('calls for the backup at the N-th failure in a row, not before', () => {
    let run = NO_FAILURES;
    run = nextFailureRun(run, true, 1_000);
    run = nextFailureRun(run, true, 2_000);
    expect(failoverDue(run, rule, 2_000)).toBe(false);
    // A rate limit in between neither counts nor starts the count afresh.
    run = nextFailureRun(run, false, 2_500);
    expect(run).toEqual({ failures: 2, sinceMs: 1_000 });
    run = nextFailureRun(run, true, 3_000);
    expect(failoverDue(run, rule, 3_000)).toBe(true);
  });

  it('calls for the backup when the outage has lasted M minutes, however few the failures', () => {
    const run = nextFailureRun(NO_FAILURES, true, 0);
    expect(failoverDue(run, rule, 5 * 60_000 - 1)).toBe(false);
    expect(failoverDue(run, rule, 5 * 60_000)).toBe(true);
    expect(failoverDue(NO_FAILURES, rule, 10 * 60_000)).toBe(false);
  });

  it('gives a step a rule only when it has a backup to go to', () => {
    expect(stepFailoverRule(undefined, undefined, undefined)).toBeNull();
    expect(stepFailoverRule('openai:b', undefined, undefined)).toEqual({
      afterFailures: DEFAULT_FAILOVER_AFTER_FAILURES,
      afterMinutes: 3,
    });
    expect(stepFailoverRule('openai:b', undefined, { afterFailures: 5, afterMinutes: 1 })).toEqual({
      afterFailures: 5,
      afterMinutes: 1,
    });
    const onBackup = switchedToBackup(undefined, { model: 'openai:a' }, 0, undefined);
    expect(stepFailoverRule('openai:b', onBackup, undefined)).toBeNull();
    // A probe of the primary goes back at its first failure.
    expect(stepFailoverRule('openai:b', probingPrimary(onBackup), undefined)?.afterFailures).toBe(1);
  });
});

describe('failover state', () => {
  it('probes the primary after the cooldown and stays after one success', () => {
    const primary = { model: 'openai-compatible:a', baseUrl: 'http://a/v1' };
    const onBackup = switchedToBackup(undefined, primary, 10_000, { cooldownS: 30 });
    expect(onBackup).toMatchObject({ active: 'backup', primary, switchedAtMs: 10_000, probeAtMs: 40_000 });
    expect(probeDue(onBackup, 39_999)).toBe(false);
    expect(probeDue(onBackup, 40_000)).toBe(true);
    const probing = probingPrimary(onBackup);
    expect(probing).toMatchObject({ active: 'primary', probing: true, probeAtMs: null, switches: 2 });
    expect(probeDue(probing, 1e12)).toBe(false);
    const back = primaryAnswered(probing);
    expect(back).toMatchObject({ active: 'primary', probing: false, switches: 2 });
    // A failed probe: back to the backup, with a new cooldown, the primary kept.
    const again = switchedToBackup(probing, { model: 'ignored' }, 50_000, { cooldownS: 30 });
    expect(again).toMatchObject({ active: 'backup', primary, probeAtMs: 80_000, switches: 3 });
  });

  it('counts the steps each model ran, without summaries and billed retries', () => {
    const usage = (requests: number, summarizerRequests: number, retries?: number) =>
      ({
        requests,
        summarizerRequests,
        ...(retries ? { retries: { requests: retries } } : {}),
      }) as never;
    expect(stepsPerModel({ a: usage(5, 1, 1), b: usage(2, 0) })).toEqual({ a: 3, b: 2 });
  });
});
