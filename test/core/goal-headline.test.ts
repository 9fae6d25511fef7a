/**
 * The headline of the Web UI's current details (issue 26 item 1): `status — reason — next command`
 * for every status a goal can be in, from the goal's own state.
 */
import { describe, expect, it } from 'vitest';
import { type GoalStatus, initialGoalState } from '../../core/goal';
import { goalHeadline } from '../../core/goal-headline';
import { snapshotOf } from '../../core/goal-snapshot';

const ID = 'sess-1';

/** The headline of a goal in this status with this reason. */
function headline(status: GoalStatus, reason: string | null, extra: Record<string, unknown> = {}): string {
  const state = {
    ...initialGoalState({
      sessionId: ID,
      objective: 'o',
      workspace: '/tmp/ws',
      model: 'scripted:/tmp/t.json',
      limits: { maxIterations: 5, maxSteps: 10, maxMinutes: 2, noProgressLimit: 3 },
    }),
    status,
    reason,
    steps: 4,
    iteration: 2,
    ...extra,
  };
  return goalHeadline(snapshotOf(state, `goalrun-${ID}`, 0));
}

describe('goalHeadline', () => {
  it('running: the counters, and how to follow it', () => {
    expect(headline('running', null)).toBe('running — step 4, iteration 2 — goalrun watch sess-1');
  });

  it('paused by a person', () => {
    expect(headline('paused', 'paused by request')).toBe(
      'paused — paused by request — goalrun unpause sess-1',
    );
  });

  it('paused by the runaway breaker', () => {
    expect(headline('paused', 'runaway breaker: the same bash call 5 times')).toBe(
      'paused — runaway breaker: the same bash call 5 times — goalrun unpause sess-1',
    );
  });

  it('paused for a quota with no reset time', () => {
    expect(
      headline('paused', 'provider quota exhausted and no reset time given (429); unpause when it is back'),
    ).toBe(
      'paused — provider quota exhausted and no reset time given (429); unpause when it is back — goalrun unpause sess-1',
    );
  });

  it("waiting for budget at the goal's money cap: the raise command once, not twice", () => {
    const reason =
      'budget reached: $0.5005 spent of $0.5000, and the next model call may cost up to $0.0100; raise it with: goalrun limits sess-1 --max-cost-usd N';
    expect(headline('budget_reached', reason)).toBe(
      'waiting for budget — budget reached: $0.5005 spent of $0.5000, and the next model call may cost up to $0.0100 — goalrun limits sess-1 --max-cost-usd N',
    );
  });

  it("waiting for budget at the goal's token cap", () => {
    const reason =
      'token budget reached: 900 tokens spent of 1000, and the next model call may take up to 500; raise it with: goalrun limits sess-1 --max-tokens N';
    expect(headline('budget_reached', reason)).toMatch(/ — goalrun limits sess-1 --max-tokens N$/);
  });

  it('waiting for the daily budget', () => {
    const reason =
      'daily budget reached: $5.0000 of $5.0000 used today, and the next model call may cost up to $0.0100; waiting until 2026-12-04T00:00:00.000Z or goalrun budget set --daily-usd N';
    expect(headline('budget_reached', reason)).toMatch(
      /^waiting for budget — daily budget reached: .* — goalrun budget set --daily-usd N$/,
    );
  });

  it('waiting for quota: it goes on by itself', () => {
    expect(headline('waiting_quota', 'provider quota exhausted until 2026-12-03T10:00:00.000Z (429)')).toBe(
      'waiting for quota — provider quota exhausted until 2026-12-03T10:00:00.000Z (429) — goes on by itself; goalrun cancel sess-1 stops it',
    );
  });

  it('awaiting approval: the command, and both answers', () => {
    const approval = {
      toolCallId: 'c1',
      command: 'npm install',
      justification: 'needs the network',
      requestedAtMs: 0,
      deadlineMs: 1,
    };
    expect(headline('waiting_approval', 'waiting for approval: npm install', { approval })).toBe(
      'waiting for approval — `npm install` needs approval to run outside the sandbox — goalrun approve sess-1 or goalrun deny sess-1',
    );
  });

  it('completed', () => {
    expect(headline('completed', 'greeting written')).toBe(
      'completed — greeting written — goalrun resume sess-1 --message "…"',
    );
  });

  it('blocked', () => {
    expect(headline('blocked', 'no progress in 3 iterations')).toBe(
      'blocked — no progress in 3 iterations — goalrun resume sess-1 --message "…"',
    );
  });

  it('failed', () => {
    expect(headline('failed', 'provider unreachable')).toBe(
      'failed — provider unreachable — goalrun resume sess-1 --message "…"',
    );
  });

  it('cancelled', () => {
    expect(headline('cancelled', 'cancelled by request')).toBe(
      'cancelled — cancelled by request — goalrun resume sess-1 --message "…"',
    );
  });

  it('at a limit: the flag of the limit it hit', () => {
    expect(headline('limit_reached', 'iteration limit reached (5 iterations)')).toBe(
      'limit reached — iteration limit reached (5 iterations) — goalrun limits sess-1 --max-iterations N',
    );
  });

  it('cleared: where the goal went on', () => {
    expect(headline('cleared', 'cleared; the goal goes on in session sess-2')).toBe(
      'cleared — cleared; the goal goes on in session sess-2 — goalrun watch sess-2',
    );
  });

  it('says so when an ended goal has no reason', () => {
    expect(headline('failed', null)).toBe('failed — no reason given — goalrun resume sess-1 --message "…"');
  });
});
