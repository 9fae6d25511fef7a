import { describe, expect, it } from 'vitest';
import {
  type AutoCompactInput,
  autoCompactThresholdTokens,
  decideAutoCompact,
} from '../../../core/compaction/decide';
import {
  initialAutoCompactState,
  recordCompactionSuccess,
  recordSummarizerFailure,
  setAutoCompact,
} from '../../../core/compaction/failure-budget';

/** A 100k window: threshold 85k, hard limit 95k, a 10k system prompt with tool schemas. */
function input(overrides: Partial<AutoCompactInput> = {}): AutoCompactInput {
  return {
    budgetState: initialAutoCompactState(),
    estimateTokens: 90_000,
    fixedTokens: 10_000,
    thresholdTokens: 85_000,
    hardLimitTokens: 95_000,
    stepNumber: 20,
    ...overrides,
  };
}

const paused = () => {
  let state = initialAutoCompactState();
  for (let i = 0; i < 3; i++) state = recordSummarizerFailure(state, 'boom', 's').state;
  return state;
};

const action = (overrides: Partial<AutoCompactInput>) => decideAutoCompact(input(overrides)).action;

describe('autoCompactThresholdTokens', () => {
  it('is the percentage of the window', () => {
    expect(autoCompactThresholdTokens(100_000, 85)).toBe(85_000);
    expect(autoCompactThresholdTokens(128_000, 85)).toBe(108_800);
  });
});

describe('decideAutoCompact', () => {
  it('does nothing under the threshold', () => {
    expect(decideAutoCompact(input({ estimateTokens: 84_999 }))).toEqual({
      action: 'none',
      reason: 'context 85k tokens is under the threshold of 85k',
    });
  });

  it('compacts at and past the threshold', () => {
    expect(action({ estimateTokens: 85_000 })).toBe('compact');
    expect(decideAutoCompact(input())).toEqual({
      action: 'compact',
      reason: 'context 90k tokens is over the threshold of 85k',
    });
  });

  it('waits silently when the system prompt and tool schemas alone are over the threshold', () => {
    expect(action({ fixedTokens: 85_000 })).toBe('wait');
  });

  it('waits when even the fullest summary would stay over the threshold', () => {
    expect(action({ floorTokens: 86_000 })).toBe('wait');
    expect(action({ floorTokens: 40_000 })).toBe('compact');
  });

  it('compacts at most once per step, forced included', () => {
    const state = recordCompactionSuccess(initialAutoCompactState(), 20);
    expect(action({ budgetState: state })).toBe('none');
    expect(action({ budgetState: state, estimateTokens: 120_000 })).toBe('none');
  });

  it('does not compact again at the very next step unless over the hard limit', () => {
    const state = recordCompactionSuccess(initialAutoCompactState(), 19);
    expect(decideAutoCompact(input({ budgetState: state }))).toEqual({
      action: 'none',
      reason: 'compacted before step 19; not again right away',
    });
    expect(action({ budgetState: state, estimateTokens: 96_000 })).toBe('forced');
    expect(action({ budgetState: recordCompactionSuccess(initialAutoCompactState(), 18) })).toBe('compact');
  });

  it('only prunes while paused', () => {
    expect(action({ budgetState: paused() })).toBe('prune-only');
  });

  it('forces one compaction over the hard limit, even paused or switched off', () => {
    expect(action({ estimateTokens: 95_001 })).toBe('forced');
    expect(action({ budgetState: paused(), estimateTokens: 95_001 })).toBe('forced');
    expect(
      action({ budgetState: setAutoCompact(initialAutoCompactState(), false), estimateTokens: 99_000 }),
    ).toBe('forced');
    // The hard limit itself still fits.
    expect(action({ budgetState: paused(), estimateTokens: 95_000 })).toBe('prune-only');
  });

  it('waits over the hard limit when the fixed part alone does not fit', () => {
    expect(action({ fixedTokens: 95_000, estimateTokens: 99_000 })).toBe('wait');
  });

  it('does nothing below the hard limit when auto-compact is off', () => {
    expect(
      decideAutoCompact(input({ budgetState: setAutoCompact(initialAutoCompactState(), false) })),
    ).toEqual({
      action: 'none',
      reason: 'auto-compact is off',
    });
  });
});
