/**
 * The gates of the goal loop (limit, money cap, daily budget, breaker, quota), each driven through the
 * GoalRun port with a fake run (fake-run.ts): no server, no store. What a gate decides, what it saves,
 * how long it waits and how the goal ends are asserted here; the e2e tests run the same code for real.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { addToBreakdown } from '../../core/cost';
import { FailureType } from '../../core/errors';
import { INITIAL_BREAKER } from '../../core/runaway-breaker';
import { DEFAULT_QUOTA_WAIT_MINUTES } from '../../core/waits';
import { LIMIT_WAIT_MS } from '../../workflows/boundary';
import {
  breakerAfterSteering,
  breakerAfterTool,
  breakerAfterTurn,
  breakerAfterWorkflowTool,
  breakerOnResume,
  breakerOnUnpause,
  takeBreakerWarning,
} from '../../workflows/breaker-gate';
import { checkNextCall, waitAtBudget } from '../../workflows/budget-gate';
import {
  DAILY_BUDGET_POLL_MS,
  NO_DAILY_CAP_RECHECK_MS,
  reserveDaily,
  settleDailyStep,
} from '../../workflows/daily-budget-gate';
import { waitAtLimit } from '../../workflows/limit-gate';
import { PATCH } from '../../workflows/patches';
import { waitForQuota } from '../../workflows/quota-wait';
import { advanceClock, FakeRun, PRICED_CARD, useWorkflowClock } from './fake-run';

beforeEach(() => useWorkflowClock());
afterEach(() => vi.useRealTimers());

describe('the limit gate', () => {
  const atStepLimit = () => {
    const run = new FakeRun({
      goal: { limits: { maxSteps: 3, maxIterations: 10, maxMinutes: 60, noProgressLimit: 3 } },
    });
    run.state = { ...run.state, steps: 3 };
    return { run, stop: run.session.stopDecision()! };
  };

  it('waits a day at the limit, then ends the goal as limit_reached', async () => {
    const { run, stop } = atStepLimit();
    expect(stop.status).toBe('limit_reached');
    expect(await waitAtLimit(run, stop, run.hooks())).toBe(false);
    expect(run.waits).toEqual([LIMIT_WAIT_MS]);
    expect(run.eventKinds()).toEqual(['limit-reached', 'goal-ended']);
    expect(run.saves.map((save) => save.status)).toEqual(['limit_reached', 'limit_reached']);
    expect(run.killedJobs).toBeGreaterThan(0);
    expect(run.session.clockRunning).toBe(false);
  });

  it('goes on when the limit is raised during the wait', async () => {
    const { run, stop } = atStepLimit();
    run.during.push((r) => r.session.setLimits({ maxSteps: 10 }));
    expect(await waitAtLimit(run, stop, run.hooks())).toBe(true);
    expect(run.state.status).toBe('running');
    expect(run.eventKinds()).toEqual(['limit-reached', 'limits-raised']);
    expect(run.timeLimitLog.at(-1)).toMatch(/^arm /);
    expect(run.session.clockRunning).toBe(true);
  });

  it('lets a /clear end the wait without ending the goal itself', async () => {
    const { run, stop } = atStepLimit();
    expect(
      await waitAtLimit(
        run,
        stop,
        run.hooks(() => true),
      ),
    ).toBe(true);
    expect(run.eventKinds()).toEqual(['limit-reached']);
  });
});

describe('the money and token cap', () => {
  it('has nothing to check on a goal without a cap, and stops a call whose worst case passes it', () => {
    expect(checkNextCall(new FakeRun().state)).toBeNull();
    // The worst case of a call on the priced card: 1,000 output tokens at $4 per million = $0.004.
    const capped = new FakeRun({
      goal: { limits: { ...new FakeRun().state.goal.limits, maxCostUsd: 0.003 } },
    });
    const check = checkNextCall(capped.state)!;
    expect(check.reservation.costUsd).toBeCloseTo(0.004, 6);
    expect(check.stop?.cap).toBe('cost');
    const roomy = new FakeRun({ goal: { limits: { ...new FakeRun().state.goal.limits, maxCostUsd: 1 } } });
    expect(checkNextCall(roomy.state)?.stop).toBeNull();
  });

  const atCap = (budgetWaitMinutes?: number) => {
    const base = new FakeRun().state.goal.limits;
    const run = new FakeRun({ goal: { limits: { ...base, maxCostUsd: 0.003 }, budgetWaitMinutes } });
    return { run, stop: checkNextCall(run.state)!.stop! };
  };

  it('waits budget_wait_minutes at the cap, then ends as budget_reached saying how to raise it', async () => {
    const { run, stop } = atCap(5);
    expect(await waitAtBudget(run, stop, run.hooks())).toBe(false);
    expect(run.waits).toEqual([5 * 60_000]);
    expect(run.state.status).toBe('budget_reached');
    expect(run.saves[0].reason).toContain('raise it with: goalrun limits sess-fake --max-cost-usd N');
    expect(run.state.reason).toContain(
      'no raise came in 5 minutes (budget_wait_minutes): go on with goalrun resume sess-fake --max-cost-usd N',
    );
    expect(run.eventKinds()).toEqual(['budget', 'goal-ended']);
  });

  it('waits a day without budget_wait_minutes, and goes on when the cap is raised', async () => {
    const { run, stop } = atCap();
    run.during.push((r) => {
      r.session.setLimits({ maxCostUsd: 1 });
    });
    expect(await waitAtBudget(run, stop, run.hooks())).toBe(true);
    expect(run.waits).toEqual([LIMIT_WAIT_MS]);
    expect(run.state.status).toBe('running');
    expect(run.budgetAts()).toEqual(['cap', 'raised']);
  });
});

describe('the daily budget', () => {
  it('asks the store once when it has no daily cap, and not again for a while', async () => {
    const run = new FakeRun();
    run.storeAnswers.push({ kind: 'none' });
    expect(await reserveDaily(run, run.hooks())).toEqual({
      kind: 'go',
      reservationId: null,
      spentBeforeUsd: 0,
    });
    expect(await reserveDaily(run, run.hooks())).toMatchObject({ kind: 'go', reservationId: null });
    expect(run.storeCalls).toHaveLength(1);
    advanceClock(NO_DAILY_CAP_RECHECK_MS + 1);
    run.storeAnswers.push({ kind: 'none' });
    await reserveDaily(run, run.hooks());
    expect(run.storeCalls).toHaveLength(2);
  });

  it("reserves the call's worst case and settles it with what the step cost", async () => {
    const run = new FakeRun();
    run.storeAnswers.push({ kind: 'reserved', id: 'r1' });
    const gate = await reserveDaily(run, run.hooks());
    expect(gate).toEqual({ kind: 'go', reservationId: 'r1', spentBeforeUsd: 0 });
    expect((run.storeCalls[0].input as { reservationUsd: number }).reservationUsd).toBeCloseTo(0.004, 6);
    // 500 tokens in at $1 per million and 500 out at $4: $0.0025.
    const usage = { inputTokens: 500, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0 };
    run.state = {
      ...run.state,
      breakdown: addToBreakdown({}, 'test:priced', usage, { summarizer: false, card: PRICED_CARD }),
    };
    run.storeAnswers.push(() => undefined);
    await settleDailyStep(run, gate);
    expect(run.storeCalls[1]).toEqual({
      name: 'settleDailyBudget',
      input: { id: 'r1', costUsd: expect.closeTo(0.0025, 6) },
    });
  });

  it('waits in budget_reached, asking the store every minute, and goes round once a call fits', async () => {
    const run = new FakeRun();
    const refused = {
      kind: 'refused',
      capUsd: 1,
      countedUsd: 0.999,
      reservationUsd: 0.004,
      nextWindowAt: '2026-06-02T00:00:00.000Z',
    };
    run.storeAnswers.push(refused, refused, { kind: 'reserved', id: 'r2' }, () => undefined);
    expect(await reserveDaily(run, run.hooks())).toEqual({ kind: 'again' });
    expect(run.waits).toEqual([DAILY_BUDGET_POLL_MS, DAILY_BUDGET_POLL_MS]);
    // The reservation of the poll that fitted is given back: the loop reserves again at the step.
    expect(run.storeCalls.at(-1)).toEqual({ name: 'settleDailyBudget', input: { id: 'r2', costUsd: 0 } });
    expect(run.saves.map((save) => save.status)).toEqual(['budget_reached', 'running']);
    expect(run.budgetAts()).toEqual(['cap', 'raised']);
    expect(run.saves[0].reason).toContain('daily budget reached');
  });

  it('ends the wait at a /clear', async () => {
    const run = new FakeRun();
    run.storeAnswers.push({
      kind: 'refused',
      capUsd: 1,
      countedUsd: 1,
      reservationUsd: 0.004,
      nextWindowAt: 'x',
    });
    let cleared = false;
    run.during.push(() => {
      cleared = true;
    });
    expect(
      await reserveDaily(
        run,
        run.hooks(() => cleared),
      ),
    ).toEqual({ kind: 'again' });
    expect(run.storeCalls).toHaveLength(1);
  });
});

describe('the daily budget wait that ends (PATCH.waitsEnd)', () => {
  const refusal = (capUsd = 1, countedUsd = 0.999) => ({
    kind: 'refused',
    capUsd,
    countedUsd,
    reservationUsd: 0.004,
    nextWindowAt: '2026-06-02T00:00:00.000Z',
  });
  /** The input each reserveDailyBudget call asked for, in dollars. */
  const asked = (run: FakeRun) =>
    run.storeCalls
      .filter((call) => call.name === 'reserveDailyBudget')
      .map((call) => (call.input as { reservationUsd: number }).reservationUsd);

  it('refuses at once a call whose worst case alone is over the daily cap: the goal ends blocked', async () => {
    const run = new FakeRun();
    // The call's worst case is $0.004 (1,000 output tokens at $4 per million); the cap is $0.001.
    run.storeAnswers.push(refusal(0.001, 0));
    expect(await reserveDaily(run, run.hooks())).toEqual({ kind: 'ended' });
    expect(run.waits).toEqual([]);
    expect(run.state.status).toBe('blocked');
    expect(run.state.reason).toMatch(/^a single call needs \$0\.0040, the daily budget is \$0\.0010; /);
    expect(run.state.reason).toContain('goalrun budget set --daily-usd N');
    expect(run.eventKinds()).toEqual(['goal-ended']);
  });

  it('prices the call again at every poll, so a compaction during the wait can make it fit', async () => {
    const run = new FakeRun();
    const compaction = run.state.compaction!;
    run.state = { ...run.state, compaction: { ...compaction, lastInputTokens: 50_000 } };
    // 50,000 tokens in at $1 per million and 1,000 out at $4: $0.054; compacted to nothing: $0.004.
    run.during.push((r) => {
      r.state = { ...r.state, compaction: { ...r.state.compaction!, lastInputTokens: 0, fixedTokens: 0 } };
    });
    run.storeAnswers.push(refusal(0.06, 0.05), { kind: 'reserved', id: 'r3' }, () => undefined);
    expect(await reserveDaily(run, run.hooks())).toEqual({ kind: 'again' });
    const [first, second] = asked(run);
    expect(first).toBeCloseTo(0.054, 6);
    expect(second).toBeCloseTo(0.004, 6);
    expect(run.state.status).toBe('running');
    expect(run.state.dailyWaitSinceMs).toBeNull();
  });

  it('ends the goal as budget_reached after budget_wait_minutes, saying how to raise the daily budget', async () => {
    const run = new FakeRun({ goal: { budgetWaitMinutes: 3 } });
    run.storeAnswers.push(refusal(), refusal(), refusal(), refusal());
    expect(await reserveDaily(run, run.hooks())).toEqual({ kind: 'ended' });
    expect(run.waits).toEqual([DAILY_BUDGET_POLL_MS, DAILY_BUDGET_POLL_MS, DAILY_BUDGET_POLL_MS]);
    expect(run.state.status).toBe('budget_reached');
    expect(run.state.reason).toBe(
      'daily budget reached, and no raise came in 3 minutes (budget_wait_minutes); raise it with: goalrun budget set --daily-usd N, then goalrun resume sess-fake',
    );
    expect(run.eventKinds()).toEqual(['budget', 'goal-ended']);
    expect(run.saves[0].reason).toContain('raise it with: goalrun budget set --daily-usd N');
  });

  it('ends the goal as blocked when the cap is lowered under the call during the wait', async () => {
    const run = new FakeRun();
    run.storeAnswers.push(refusal(), refusal(0.002, 0.002));
    expect(await reserveDaily(run, run.hooks())).toEqual({ kind: 'ended' });
    expect(run.waits).toEqual([DAILY_BUDGET_POLL_MS]);
    expect(run.state.status).toBe('blocked');
    expect(run.state.reason).toMatch(/^a single call needs \$0\.0040, the daily budget is \$0\.0020/);
  });

  it('hands the wait over at continue-as-new, and the next run goes on counting from its start', async () => {
    const run = new FakeRun({ goal: { budgetWaitMinutes: 5 } });
    const started = Date.now();
    let suggested = false;
    const hooks = { ...run.hooks(), continueAsNewSuggested: () => suggested };
    run.during.push(
      () => undefined,
      () => {
        suggested = true;
      },
    );
    run.storeAnswers.push(refusal(), refusal(), refusal());
    expect(await reserveDaily(run, hooks)).toEqual({ kind: 'again' });
    expect(run.waits).toEqual([DAILY_BUDGET_POLL_MS, DAILY_BUDGET_POLL_MS]);
    expect(run.state.status).toBe('budget_reached');
    expect(run.state.dailyWaitSinceMs).toBe(started);

    // The next run starts from the state continue-as-new carries; its clock runs until the gate stops it.
    const next = new FakeRun({ goal: { budgetWaitMinutes: 5 } });
    next.state = run.session.savedState();
    next.storeAnswers.push(refusal(), refusal(), refusal(), refusal());
    expect(await reserveDaily(next, next.hooks())).toEqual({ kind: 'ended' });
    // Two minutes were waited in the first run: three more here, and no second cap event.
    expect(next.waits).toEqual([DAILY_BUDGET_POLL_MS, DAILY_BUDGET_POLL_MS, DAILY_BUDGET_POLL_MS]);
    expect(next.eventKinds()).toEqual(['goal-ended']);
    expect(next.state.status).toBe('budget_reached');
    expect(next.timeLimitLog[0]).toBe('disarm');
  });

  it('lets a carried-over wait end when the first poll of the next run fits', async () => {
    const run = new FakeRun();
    run.state = {
      ...run.state,
      status: 'budget_reached',
      reason: 'daily budget reached',
      dailyWaitSinceMs: 1,
    };
    run.storeAnswers.push({ kind: 'reserved', id: 'r4' }, () => undefined);
    expect(await reserveDaily(run, run.hooks())).toEqual({ kind: 'again' });
    expect(run.storeCalls.map((call) => call.name)).toEqual(['reserveDailyBudget', 'settleDailyBudget']);
    expect(run.state.status).toBe('running');
    expect(run.budgetAts()).toEqual(['raised']);
  });

  it('keeps the old wait for runs started before the patch', async () => {
    const run = new FakeRun({ features: { [PATCH.waitsEnd]: false }, goal: { budgetWaitMinutes: 1 } });
    run.storeAnswers.push(
      refusal(0.001, 0),
      refusal(0.001, 0),
      { kind: 'reserved', id: 'r5' },
      () => undefined,
    );
    expect(await reserveDaily(run, run.hooks())).toEqual({ kind: 'again' });
    expect(run.waits).toEqual([DAILY_BUDGET_POLL_MS, DAILY_BUDGET_POLL_MS]);
    expect(run.state.dailyWaitSinceMs).toBeUndefined();
  });
});

describe('the runaway breaker gate', () => {
  const call = { toolCallId: 't', toolName: 'bash', summary: 'bash: ls' };
  const result = { ok: true, firstLine: 'a', lastLine: 'a', callDigest: 'bash ls', outputDigest: 'same' };

  it('pauses a goal of an older build when the same call answers the same five times', () => {
    const run = new FakeRun({ features: { [PATCH.breakerWarnsFirst]: false } });
    for (let i = 0; i < 4; i++) breakerAfterTool(run, call, result as never);
    expect(run.state.paused).toBe(false);
    breakerAfterTool(run, call, result as never);
    expect(run.state.paused).toBe(true);
    expect(run.state.breaker?.tripped).toContain('5 times in a row');
    expect(run.state.recent.at(-1)?.text).toContain('paused by the runaway breaker');
  });

  it('warns a goal of this build at five, with a notice for the end of the step, and pauses at eight', () => {
    const run = new FakeRun();
    for (let i = 0; i < 4; i++) breakerAfterTool(run, call, result as never);
    expect(takeBreakerWarning(run)).toBeNull();
    breakerAfterTool(run, call, result as never);
    expect(run.state.paused).toBe(false);
    const warning = takeBreakerWarning(run);
    expect(warning).toContain('the same bash call `ls` returned the same result 5 times in a row');
    // Taken once: the step writes it once.
    expect(takeBreakerWarning(run)).toBeNull();
    breakerAfterTool(run, call, result as never);
    breakerAfterTool(run, call, result as never);
    expect(run.state.paused).toBe(false);
    breakerAfterTool(run, call, result as never);
    expect(run.state.paused).toBe(true);
    expect(run.state.breaker?.tripped).toBe(
      'the same bash call `ls` returned the same output 8 times in a row, after a warning at 5',
    );
  });

  it('counts a finish a stop hook vetoes the same way, but not one that ends the goal', () => {
    const run = new FakeRun();
    const args = {
      tool: 'finish',
      parsed: { ok: true, args: { status: 'complete', summary: 'done' } },
    } as const;
    const vetoed = { state: run.state, ok: false, text: '[a stop hook kept the goal going] tests fail' };
    for (let i = 0; i < 8; i++)
      breakerAfterWorkflowTool(run, 'finish', args, { ...vetoed, state: run.state });
    expect(run.state.paused).toBe(true);
    expect(run.state.breaker?.tripped).toContain('the same finish call `complete`');
    const ends = new FakeRun();
    const ended = { ...vetoed, ok: true, finished: { status: 'completed' as const, reason: null } };
    breakerAfterWorkflowTool(ends, 'finish', args, ended);
    expect(ends.state.breaker).toBeUndefined();
  });

  it("lets a steering message unpause a breaker pause and restart the counts; a person's pause stays", () => {
    const run = new FakeRun();
    for (let i = 0; i < 8; i++) breakerAfterTool(run, call, result as never);
    expect(run.state.paused).toBe(true);
    expect(breakerAfterSteering(run)).toEqual({ unpaused: true });
    expect(run.state.paused).toBe(false);
    // The unpause at the boundary still tells the model why it was stopped, then all is fresh.
    expect(breakerOnUnpause(run)).toContain('you were paused by the runaway breaker');
    expect(run.state.breaker).toEqual(INITIAL_BREAKER);
    const paused = new FakeRun();
    for (let i = 0; i < 4; i++) breakerAfterTool(paused, call, result as never);
    paused.session.pause();
    expect(breakerAfterSteering(paused)).toEqual({ paused: 'paused by request' });
    expect(paused.state.paused).toBe(true);
    // The steering restarted the count: four more are not five.
    paused.session.unpause();
    for (let i = 0; i < 4; i++) breakerAfterTool(paused, call, result as never);
    expect(takeBreakerWarning(paused)).toBeNull();
  });

  it("restarts the counts on an unpause after a person's pause, and forgets them on resume", () => {
    const run = new FakeRun();
    for (let i = 0; i < 4; i++) breakerAfterTool(run, call, result as never);
    expect(breakerOnUnpause(run)).toBeNull();
    for (let i = 0; i < 4; i++) breakerAfterTool(run, call, result as never);
    expect(takeBreakerWarning(run)).toBeNull();
    for (let i = 0; i < 8; i++) breakerAfterTool(run, call, result as never);
    expect(run.state.breaker?.tripped).toBeTruthy();
    run.state = { ...run.state, pauseReason: 'quota' };
    breakerOnResume(run);
    expect(run.state.breaker).toBeUndefined();
    expect(run.state.pauseReason).toBeNull();
    const old = new FakeRun({ features: { [PATCH.breakerWarnsFirst]: false } });
    for (let i = 0; i < 5; i++) breakerAfterTool(old, call, result as never);
    breakerOnResume(old);
    expect(old.state.breaker?.tripped).toBeTruthy();
  });

  it('pauses after three model turns without a tool call', () => {
    const run = new FakeRun();
    for (let i = 0; i < 3; i++) breakerAfterTurn(run, 0, { costUsd: 0, tokens: 10 });
    expect(run.state.paused).toBe(true);
  });

  it('leaves goals started before the command queue alone', () => {
    const run = new FakeRun({ features: { [PATCH.commandQueue]: false } });
    for (let i = 0; i < 6; i++) breakerAfterTool(run, call, result as never);
    expect(run.state.paused).toBe(false);
    expect(run.state.breaker ?? INITIAL_BREAKER).toEqual(INITIAL_BREAKER);
  });
});

describe('the quota wait', () => {
  const quotaError = (resetAtMs?: number) => ({
    message: 'activity failed',
    cause: {
      type: FailureType.QuotaExhausted,
      message: 'insufficient_quota',
      details: resetAtMs === undefined ? [] : [{ resetAtMs }],
    },
  });

  it('pauses with the reason when the provider gives no reset time', async () => {
    const run = new FakeRun();
    await waitForQuota(run, run.stepControl(), quotaError(), 4);
    expect(run.state.paused).toBe(true);
    expect(run.state.pauseReason).toContain('no reset time given (insufficient_quota)');
    expect(run.waits).toEqual([]);
  });

  it('waits in waiting_quota until the reset time, then goes on', async () => {
    const run = new FakeRun();
    await waitForQuota(run, run.stepControl(), quotaError(Date.now() + 90_000), 4);
    expect(run.waits).toEqual([90_000]);
    expect(run.saves.map((save) => [save.status, save.event?.kind])).toEqual([
      ['waiting_quota', 'quota-wait'],
      ['running', 'quota-resumed'],
    ]);
    expect(run.session.clockRunning).toBe(true);
  });

  it('ends the goal as blocked at once when the quota comes back later than quota_wait_minutes', async () => {
    const run = new FakeRun({ goal: { quotaWaitMinutes: 60 } });
    const ended = await waitForQuota(run, run.stepControl(), quotaError(Date.now() + 61 * 60_000), 4);
    expect(ended?.status).toBe('blocked');
    expect(ended?.reason).toMatch(
      /^provider quota exhausted until 2026-06-01T13:01:00\.000Z \(insufficient_quota\), later than the longest quota wait \(60 minutes, config quota_wait_minutes\)/,
    );
    expect(run.waits).toEqual([]);
    expect(run.saves).toEqual([]);
  });

  it('waits up to a day by default, and without the patch waits however long the provider says', async () => {
    const run = new FakeRun();
    expect(await waitForQuota(run, run.stepControl(), quotaError(Date.now() + DAY_MS), 4)).toBeNull();
    expect(run.waits).toEqual([DAY_MS]);
    expect(await waitForQuota(run, run.stepControl(), quotaError(Date.now() + DAY_MS + 1), 4))?.toMatchObject(
      { status: 'blocked' },
    );
    const old = new FakeRun({ features: { [PATCH.waitsEnd]: false } });
    expect(await waitForQuota(old, old.stepControl(), quotaError(Date.now() + 3 * DAY_MS), 4)).toBeNull();
    expect(old.waits).toEqual([3 * DAY_MS]);
  });
});

const DAY_MS = DEFAULT_QUOTA_WAIT_MINUTES * 60_000;
