/** The model step's failover count over real provider failures (issue 27 §3): what moves a goal, and what never does. */
import { APICallError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import {
  failoverHeartbeat,
  failureRunOf,
  recoveredFailureRun,
  withFailover,
} from '../../activities/failover-count';
import { toActivityFailure } from '../../activities/providers/errors';
import { FailureType } from '../../core/errors';
import { type FailureRun, NO_FAILURES } from '../../core/failover';

const context = { provider: 'anthropic', model: 'claude-x' };
const rule = { afterFailures: 3, afterMinutes: 5 };

function answered(status: number, body: string, headers: Record<string, string> = {}) {
  return toActivityFailure(
    new APICallError({
      message: body,
      url: 'https://api.example.test/v1/messages',
      requestBodyValues: {},
      statusCode: status,
      responseHeaders: headers,
      responseBody: body,
    }),
    context,
  );
}

describe('failover count of a model step', () => {
  it('ends the step with ProviderOutage at the third overloaded answer in a row', () => {
    const overloaded = answered(529, '{"type":"error","error":{"type":"overloaded_error"}}', {
      'retry-after': '2',
    });
    // Retry-After is honoured for the retries before the switch.
    expect(overloaded.nextRetryDelay).toBe(2_000);
    let run = NO_FAILURES;
    for (const [attempt, failure] of [overloaded, answered(503, 'server_is_overloaded')].entries()) {
      const counted = withFailover(failure, run, rule, 1_000 * attempt);
      expect(counted.failure).toBe(failure);
      expect(counted.counted).toBe(true);
      // Attempt `attempt + 1` failed; the next one reads its heartbeat back, complete.
      const carried = failureRunOf(failoverHeartbeat(counted.run, attempt + 1), attempt + 2);
      expect(carried.seenAttempt).toBe(attempt + 1);
      run = carried.run;
    }
    const third = withFailover(answered(502, 'bad gateway'), run, rule, 3_000);
    expect(third.failure.type).toBe(FailureType.ProviderOutage);
    expect(third.failure.nonRetryable).toBe(true);
    expect(third.failure.message).toMatch(
      /^3 provider failures in a row; switching to the backup model. Last: .*HTTP 502/,
    );
  });

  it('never counts a 400, 401, 403, a context overflow or a rate limit', () => {
    const failures = [
      answered(400, 'invalid request'),
      answered(401, 'invalid x-api-key'),
      answered(403, 'forbidden'),
      answered(400, 'prompt is too long: 300000 tokens > 200000 maximum context length'),
      answered(429, 'rate limited'),
    ];
    let run: FailureRun = { failures: 2, sinceMs: 0 };
    for (const failure of failures) {
      const counted = withFailover(failure, run, rule, 1_000);
      expect(counted.failure).toBe(failure);
      run = counted.run;
    }
    expect(run).toEqual({ failures: 2, sinceMs: 0 });
    expect(failures.map((failure) => failure.type)).toEqual([
      FailureType.ProviderBadRequest,
      FailureType.ProviderAuth,
      FailureType.ProviderAuth,
      FailureType.ContextOverflow,
      FailureType.ProviderUnavailable,
    ]);
  });

  it('leaves the failure alone without a rule (no backup, or already on it)', () => {
    const failure = answered(529, 'overloaded');
    const counted = withFailover(failure, { failures: 9, sinceMs: 0 }, undefined, 60 * 60_000);
    expect(counted.failure).toBe(failure);
  });
});

describe('the failover count when a heartbeat was lost', () => {
  it('takes a heartbeat as accounting for the attempts it names, and an older one for all before', () => {
    const heartbeat = failoverHeartbeat({ failures: 2, sinceMs: 5 }, 2);
    expect(failureRunOf(heartbeat, 3)).toEqual({ run: { failures: 2, sinceMs: 5 }, seenAttempt: 2 });
    // The heartbeat of attempt 2 reached attempt 5: attempts 3 and 4 are unaccounted for.
    expect(failureRunOf(heartbeat, 5).seenAttempt).toBe(2);
    // A worker of an earlier version named no attempt.
    const older = { failoverFailures: 1, failoverSinceMs: 5 };
    expect(failureRunOf(older, 4)).toEqual({ run: { failures: 1, sinceMs: 5 }, seenAttempt: 3 });
    expect(failureRunOf(undefined, 4)).toEqual({ run: NO_FAILURES, seenAttempt: 0 });
    expect(failureRunOf({ failoverFailures: -1, failoverSinceMs: null }, 4).seenAttempt).toBe(0);
  });

  it('adds the recorded failures of the unaccounted attempts, and only those that counted', async () => {
    const recorded = new Map([
      [1, { failover: true, atMs: 100 }],
      [2, { failover: false, atMs: 200 }],
      [3, { failover: true, atMs: 300 }],
      [4, { atMs: 400 }],
    ]);
    const asked: number[] = [];
    const read = async (attempt: number) => {
      asked.push(attempt);
      return recorded.get(attempt) ?? null;
    };
    // Nothing carried into attempt 6: attempts 1-5 are read; 1 and 3 counted, 5 has no event.
    expect(await recoveredFailureRun({ run: NO_FAILURES, seenAttempt: 0 }, 6, read)).toEqual({
      failures: 2,
      sinceMs: 100,
    });
    expect(asked).toEqual([1, 2, 3, 4, 5]);
    // Carried through attempt 2 (one failure since 100): only attempt 3 is read.
    asked.length = 0;
    expect(
      await recoveredFailureRun({ run: { failures: 1, sinceMs: 100 }, seenAttempt: 2 }, 4, read),
    ).toEqual({
      failures: 2,
      sinceMs: 100,
    });
    expect(asked).toEqual([3]);
    // Complete: nothing is read.
    asked.length = 0;
    await recoveredFailureRun({ run: NO_FAILURES, seenAttempt: 3 }, 4, read);
    expect(asked).toEqual([]);
  });
});
