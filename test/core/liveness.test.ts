import { describe, expect, it } from 'vitest';
import {
  type LivenessFacts,
  livenessOf,
  stallClockStart,
  stallDueInMs,
  stalledReason,
} from '../../core/liveness';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const facts = (over: Partial<LivenessFacts> = {}): LivenessFacts => ({
  now: NOW,
  status: 'running',
  taskQueue: 'q',
  lastPollMs: NOW - 5_000,
  activities: [],
  workflowTaskFailure: null,
  lastStepMs: NOW - 60_000,
  stallAfterMs: 10 * 60_000,
  ...over,
});

describe('livenessOf', () => {
  it('sees nothing wrong with a goal whose worker polls and whose steps finish', () => {
    expect(livenessOf(facts())).toEqual({ waitingForWorkerSince: null, stuck: null, stalled: null });
  });

  it('keeps an idle worker whose long poll is still open as live', () => {
    expect(livenessOf(facts({ lastPollMs: NOW - 75_000 })).waitingForWorkerSince).toBeNull();
  });

  it('says waiting for a worker once no poll was open for 30 s, since the last poll', () => {
    const last = NOW - 95_000;
    expect(livenessOf(facts({ lastPollMs: last })).waitingForWorkerSince).toBe(new Date(last).toISOString());
  });

  it('says waiting for a worker when the running activity timed out on its heartbeat', () => {
    const alive = NOW - 20_000;
    const result = livenessOf(
      facts({
        activities: [
          {
            activityType: 'runTool',
            attempt: 2,
            lastFailure: 'activity Heartbeat timeout',
            state: 'scheduled',
            lastAliveMs: alive,
          },
        ],
      }),
    );
    expect(result.waitingForWorkerSince).toBe(new Date(alive).toISOString());
  });

  it('shows a determinism error as stuck with its first line', () => {
    const result = livenessOf(
      facts({
        workflowTaskFailure: '\n[TMPRL1100] Nondeterminism error: Timer machine does not handle\nstack',
      }),
    );
    expect(result.stuck).toBe('[TMPRL1100] Nondeterminism error: Timer machine does not handle');
    expect(livenessOf(facts({ workflowTaskFailure: 'TypeError: x is undefined' })).stuck).toBeNull();
  });

  it('says stalled after the threshold without a finished step, with what the goal waits on', () => {
    const old = NOW - 11 * 60_000;
    const stalled = (over: Partial<LivenessFacts>) => livenessOf(facts({ lastStepMs: old, ...over })).stalled;
    expect(stalled({})?.since).toBe(new Date(old).toISOString());
    expect(stalled({ status: 'paused' })?.waitingOn).toMatch(/paused/);
    expect(stalled({ status: 'waiting_approval' })?.waitingOn).toMatch(/approval/);
    expect(stalled({ status: 'limit_reached' })?.waitingOn).toMatch(/limit/);
    expect(stalled({ lastPollMs: null })?.waitingOn).toMatch(/no worker is polling task queue q/);
    expect(
      stalled({ activities: [{ activityType: 'modelStep', attempt: 3, lastFailure: 'HTTP 503\nmore' }] })
        ?.waitingOn,
    ).toBe('modelStep retrying (attempt 3), last error: HTTP 503');
    expect(
      stalled({ activities: [{ activityType: 'modelStep', attempt: 1, lastFailure: null }] })?.waitingOn,
    ).toBe('waiting for the model');
    expect(livenessOf(facts({ lastStepMs: NOW - 9 * 60_000 })).stalled).toBeNull();
  });
});

describe('the stall clock (issue 26 item 6)', () => {
  it('starts at the current run when the last step finished before it (a resumed execution)', () => {
    const previousStep = NOW - 15 * 60_000;
    const resumedAt = NOW - 40_000;
    expect(stallClockStart(previousStep, resumedAt)).toBe(resumedAt);
    // What `status` said of such a goal: stalled, counted from the previous execution's last step.
    const clock = stallClockStart(previousStep, resumedAt);
    expect(livenessOf(facts({ lastStepMs: clock })).stalled).toBeNull();
    expect(livenessOf(facts({ lastStepMs: previousStep })).stalled).not.toBeNull();
  });

  it('starts at the last step once one finished in this run, and at what is known otherwise', () => {
    expect(stallClockStart(NOW - 60_000, NOW - 120_000)).toBe(NOW - 60_000);
    expect(stallClockStart(null, NOW - 120_000)).toBe(NOW - 120_000);
    expect(stallClockStart(NOW - 60_000, null)).toBe(NOW - 60_000);
    expect(stallClockStart(null, null)).toBeNull();
  });

  it('marks a resumed execution stalled only stalled_after_minutes after it started', () => {
    const resumedAt = NOW - 11 * 60_000;
    const stalled = livenessOf(facts({ lastStepMs: stallClockStart(NOW - 60 * 60_000, resumedAt) })).stalled;
    expect(stalled?.since).toBe(new Date(resumedAt).toISOString());
  });
});

describe("the workflow's stall watch", () => {
  it('sleeps until the stall is due after the last finished step, and not at all once it is', () => {
    expect(stallDueInMs(NOW - 60_000, 10 * 60_000, NOW)).toBe(9 * 60_000);
    expect(stallDueInMs(NOW - 10 * 60_000, 10 * 60_000, NOW)).toBe(0);
    expect(stallDueInMs(NOW - 11 * 60_000, 10 * 60_000, NOW)).toBe(0);
  });

  it('says since when no step finished, and which setting decided it', () => {
    expect(stalledReason(NOW - 10 * 60_000, 10)).toBe(
      'no step finished since 2026-01-01T11:50:00.000Z (stalled_after_minutes 10); goalrun status shows what it waits on',
    );
  });
});
