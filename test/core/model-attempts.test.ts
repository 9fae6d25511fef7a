import { describe, expect, it } from 'vitest';
import { DEFAULT_PROVIDER_UNREACHABLE_MINUTES, MODEL_STEP_MAX_ATTEMPTS } from '../../core/limits';
import { modelStepAttempts } from '../../core/model-attempts';

describe('model step attempts', () => {
  it('never go below the fixed floor', () => {
    expect(modelStepAttempts({ providerUnreachableMinutes: 0 })).toBe(MODEL_STEP_MAX_ATTEMPTS);
    expect(modelStepAttempts({ providerUnreachableMinutes: 1 })).toBe(MODEL_STEP_MAX_ATTEMPTS);
  });

  it('cover the unreachable minutes: the backoff steps, then one attempt a minute', () => {
    expect(modelStepAttempts({ providerUnreachableMinutes: 30 })).toBe(38);
    // A part of a minute counts as a whole one.
    expect(modelStepAttempts({ providerUnreachableMinutes: 9.5 })).toBe(18);
  });

  it('use the default unreachable minutes when the goal sets none', () => {
    expect(modelStepAttempts({})).toBe(
      Math.max(MODEL_STEP_MAX_ATTEMPTS, 8 + DEFAULT_PROVIDER_UNREACHABLE_MINUTES),
    );
  });
});
