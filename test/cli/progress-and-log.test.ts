/**
 * Pure pieces of issue 7's CLI work: the live line's text and when it repeats off a terminal, the
 * limit that stops a resume, and the worker log's one-line format without task tokens.
 */
import type { LogEntry } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import {
  limitHit,
  limitOfReason,
  raiseBudgetAdvice,
  raisedLimit,
  raiseLimitAdvice,
} from '../../cli/limit-hint';
import { LiveLine, liveText, RETRY_REPEAT_MS } from '../../cli/live-line';
import { formatLogEntry } from '../../worker/logging';

/** A stream that records what is written to it. */
function fakeStream(isTTY: boolean): NodeJS.WriteStream & { text: string } {
  const stream = {
    isTTY,
    columns: 60,
    text: '',
    write(chunk: string) {
      stream.text += chunk;
      return true;
    },
  };
  return stream as unknown as NodeJS.WriteStream & { text: string };
}

const retrying = {
  step: 3,
  label: 'model step 3 · openai:gpt-4o',
  since: new Date(0),
  attempt: 4,
  lastFailure: 'Cannot connect to API:\n ECONNREFUSED',
};

describe('the live line', () => {
  it('names the step, the call, the elapsed time and the retry on one line', () => {
    expect(liveText(retrying, 75_000)).toBe(
      'step 3 · model step 3 · openai:gpt-4o · 1m 15s · retry attempt 4, last error: Cannot connect to API: ECONNREFUSED',
    );
    expect(liveText({ ...retrying, step: 0, lastFailure: null, label: 'waiting for a worker' }, 2_500)).toBe(
      'waiting for a worker · 2.5 s',
    );
  });

  it('is rewritten in place on a terminal, clipped to its width', () => {
    const out = fakeStream(true);
    const line = new LiveLine(out);
    line.update(retrying, 'a1', 1_000);
    const live = out.text;
    expect(live.startsWith('\r\x1b[2K  step 3 · model step 3')).toBe(true);
    expect(live.endsWith('…')).toBe(true);
    expect(live.length).toBeLessThanOrEqual('\r\x1b[2K'.length + 59);
    line.print('  step 3 · bash: ls');
    expect(out.text).toContain('\r\x1b[2K  step 3 · bash: ls\n');
  });

  it('off a terminal prints a retry at once, then every 30 s, and a new call at once again', () => {
    const out = fakeStream(false);
    const line = new LiveLine(out);
    line.update({ ...retrying, lastFailure: null }, 'a1', 0);
    expect(out.text).toBe('');
    line.update(retrying, 'a1', 1_000);
    line.update(retrying, 'a1', 1_000 + RETRY_REPEAT_MS - 1);
    expect(out.text.split('\n').filter(Boolean)).toHaveLength(1);
    line.update(retrying, 'a1', 1_000 + RETRY_REPEAT_MS);
    expect(out.text.split('\n').filter(Boolean)).toHaveLength(2);
    line.update({ ...retrying, attempt: 2 }, 'a2', 1_000 + RETRY_REPEAT_MS + 1);
    expect(out.text.split('\n').filter(Boolean)).toHaveLength(3);
    expect(out.text).not.toContain('\r');
  });
});

describe('limits on resume', () => {
  const limits = { maxSteps: 10, maxIterations: 5, maxMinutes: 60, noProgressLimit: 3 };

  it('finds the limit a goal is at, with the same rules as the workflow', () => {
    expect(limitHit({ steps: 9, iteration: 5, elapsedMs: 59 * 60_000 }, limits)).toBeNull();
    expect(limitHit({ steps: 10, iteration: 1, elapsedMs: 0 }, limits)).toBe('steps');
    expect(limitHit({ steps: 1, iteration: 6, elapsedMs: 0 }, limits)).toBe('iterations');
    expect(limitHit({ steps: 1, iteration: 1, elapsedMs: 60 * 60_000 }, limits)).toBe('minutes');
  });

  it('suggests a higher value and the flag that sets it', () => {
    expect(raisedLimit('steps', { steps: 10, iteration: 1, elapsedMs: 0 }, limits)).toBe(20);
    expect(raisedLimit('minutes', { steps: 1, iteration: 1, elapsedMs: 90 * 60_000 }, limits)).toBe(180);
    expect(raiseLimitAdvice('s1', 'iterations', 10)).toBe(
      'to go on, raise the iteration limit: goalrun resume s1 --max-iterations 10',
    );
    expect(limitOfReason('time limit reached (1 minute)')).toBe('minutes');
    expect(limitOfReason('the API key is missing')).toBeNull();
  });

  it('says how to raise the cap a goal in budget_reached stopped at', () => {
    expect(
      raiseBudgetAdvice(
        's1',
        'budget reached: $0.0290 spent of $0.0300, and the next model call may cost up to $0.0100; raise it with: goalrun limits s1 --max-cost-usd N',
      ),
    ).toBe(
      'to go on, raise the money cap: goalrun limits s1 --max-cost-usd 0.06 while it waits, or goalrun resume s1 --max-cost-usd 0.06 once its wait has ended',
    );
    expect(raiseBudgetAdvice('s1', 'token budget reached: 900 tokens spent of 1000, and the next …')).toBe(
      'to go on, raise the token cap: goalrun limits s1 --max-tokens 2000 while it waits, or goalrun resume s1 --max-tokens 2000 once its wait has ended',
    );
    expect(
      raiseBudgetAdvice(
        's1',
        'daily budget reached: $0.0300 of $0.0300 used today, and the next model call may cost up to $0.0100; waiting until …',
      ),
    ).toBe(
      'to go on, raise the daily budget of every goal: goalrun budget set --daily-usd 0.06 (a goal whose wait has ended: then goalrun resume s1)',
    );
    expect(raiseBudgetAdvice('s1', 'daily budget reached, and no raise came in 5 minutes')).toContain(
      'goalrun budget set --daily-usd N',
    );
  });
});

describe('the worker log', () => {
  const entry = (meta: Record<string, unknown>): LogEntry =>
    ({
      level: 'INFO',
      message: 'Activity failed',
      timestampNanos: 1_700_000_000_000_000_000n,
      meta,
    }) as LogEntry;
  const meta = {
    taskToken: 'c2VjcmV0LXRva2Vu',
    workflowId: 'goalrun-abc',
    activityType: 'modelStep',
    attempt: 2,
    namespace: 'default',
    error: new Error('Cannot connect\nto API'),
  };

  it('at info: one line with the fields a person reads', () => {
    const line = formatLogEntry(entry(meta), false);
    expect(line).toBe(
      '2023-11-14T22:13:20.000Z INFO  Activity failed · workflow=goalrun-abc activity=modelStep attempt=2 error="Cannot connect to API"',
    );
  });

  it('at debug: every field, still on one line, never the task token', () => {
    const line = formatLogEntry(entry({ ...meta, nested: { taskToken: 'x', runId: 'r1' } }), true);
    expect(line).not.toContain('\n');
    expect(line).toContain('namespace=default');
    expect(line).toContain('nested={"runId":"r1"}');
    expect(line).not.toMatch(/taskToken|c2VjcmV0/);
  });
});
