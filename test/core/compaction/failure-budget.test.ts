import { describe, expect, it } from 'vitest';
import {
  initialAutoCompactState,
  recordCompactionSuccess,
  recordPruneOnly,
  recordSummarizerFailure,
  setAutoCompact,
} from '../../../core/compaction/failure-budget';

describe('initialAutoCompactState', () => {
  it('defaults to on, 85 %, a 50 % low-water mark and three failures', () => {
    expect(initialAutoCompactState()).toEqual({
      enabled: true,
      thresholdPct: 85,
      targetPct: 50,
      maxFailures: 3,
      consecutiveFailures: 0,
      paused: false,
      lastCompactedAtStep: null,
    });
  });

  it('takes the settings, clamping values out of range', () => {
    expect(
      initialAutoCompactState({ enabled: false, thresholdPct: 70, targetPct: 40, maxFailures: 5 }),
    ).toMatchObject({
      enabled: false,
      thresholdPct: 70,
      targetPct: 40,
      maxFailures: 5,
    });
    expect(initialAutoCompactState({ thresholdPct: 150, targetPct: 0, maxFailures: 0 })).toMatchObject({
      thresholdPct: 100,
      targetPct: 1,
      maxFailures: 1,
    });
    expect(initialAutoCompactState({ thresholdPct: Number.NaN })).toMatchObject({ thresholdPct: 85 });
  });
});

describe('recordSummarizerFailure', () => {
  it('notes each failure and pauses at the third, without aborting anything', () => {
    let state = initialAutoCompactState();
    const notes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const outcome = recordSummarizerFailure(state, 'provider returned 529 overloaded', 'sess-1');
      state = outcome.state;
      notes.push(outcome.note);
    }
    expect(notes).toEqual([
      'auto-compact failed (provider returned 529 overloaded): failure 1 of 3 before it pauses',
      'auto-compact failed (provider returned 529 overloaded): failure 2 of 3 before it pauses',
      'auto-compact paused after 3 consecutive failures (last: provider returned 529 overloaded); run goalrun compact sess-1 to retry',
    ]);
    expect(state).toMatchObject({ consecutiveFailures: 3, paused: true, enabled: true });
  });

  it('names a failed `goalrun compact` a compaction, not auto-compact, and still counts it', () => {
    const { state, note } = recordSummarizerFailure(initialAutoCompactState(), 'boom', 'sess-1', true);
    expect(note).toBe(
      'compaction failed (boom); auto-compact failure 1 of 3 before it pauses: run goalrun compact sess-1 to retry',
    );
    expect(state.consecutiveFailures).toBe(1);
  });

  it('says it stays paused when a forced compaction fails while paused', () => {
    let state = initialAutoCompactState({ maxFailures: 1 });
    state = recordSummarizerFailure(state, 'boom', 's').state;
    const again = recordSummarizerFailure(state, 'boom', 's');
    expect(again.note).toBe(
      'auto-compact failed again (boom); it stays paused: run goalrun compact s to retry',
    );
    expect(again.state).toMatchObject({ consecutiveFailures: 2, paused: true });
  });

  it('quotes only the first line of a long reason, clipped', () => {
    const reason = `${'x'.repeat(500)}\nstack trace`;
    const { note } = recordSummarizerFailure(initialAutoCompactState(), reason, 's');
    expect(note).not.toContain('stack trace');
    expect(note.length).toBeLessThan(260);
    expect(recordSummarizerFailure(initialAutoCompactState(), '  ', 's').note).toContain('(unknown error)');
  });

  it('does not mark a compaction step', () => {
    const { state } = recordSummarizerFailure(initialAutoCompactState(), 'boom', 's');
    expect(state.lastCompactedAtStep).toBeNull();
  });
});

describe('recordCompactionSuccess', () => {
  it('resets the counter, lifts the pause and remembers the step', () => {
    let state = initialAutoCompactState();
    for (let i = 0; i < 3; i++) state = recordSummarizerFailure(state, 'boom', 's').state;
    expect(recordCompactionSuccess(state, 12)).toMatchObject({
      consecutiveFailures: 0,
      paused: false,
      lastCompactedAtStep: 12,
    });
  });
});

describe('recordPruneOnly', () => {
  it('remembers the step but leaves the failure counter alone', () => {
    const failed = recordSummarizerFailure(initialAutoCompactState(), 'boom', 's').state;
    expect(recordPruneOnly(failed, 7)).toMatchObject({ consecutiveFailures: 1, lastCompactedAtStep: 7 });
  });
});

describe('setAutoCompact', () => {
  it('turns auto-compact off and keeps the counter', () => {
    const failed = recordSummarizerFailure(initialAutoCompactState(), 'boom', 's').state;
    expect(setAutoCompact(failed, false)).toMatchObject({ enabled: false, consecutiveFailures: 1 });
  });

  it('turning it on again lifts a pause', () => {
    let state = initialAutoCompactState({ maxFailures: 1 });
    state = setAutoCompact(recordSummarizerFailure(state, 'boom', 's').state, false);
    expect(setAutoCompact(state, true)).toMatchObject({
      enabled: true,
      paused: false,
      consecutiveFailures: 0,
    });
  });
});
