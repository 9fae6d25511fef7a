import { describe, expect, it } from 'vitest';
import {
  afterModelTurn,
  afterToolCall,
  afterUnpause,
  type BreakerState,
  breakerSettings,
  INITIAL_BREAKER,
} from '../../core/runaway-breaker';

const settings = breakerSettings(undefined);

function calls(
  outputs: string[],
  call = 'bash {"command":"ls -1"}',
): { state: BreakerState; trips: string[] } {
  let state = INITIAL_BREAKER;
  const trips: string[] = [];
  for (const output of outputs) {
    const outcome = afterToolCall(state, settings, { summary: 'bash: ls -1', call, output });
    state = outcome.state;
    if (outcome.trip) trips.push(outcome.trip);
  }
  return { state, trips };
}

describe('the runaway breaker', () => {
  it('trips on the same call with the same result five times in a row, naming the call', () => {
    expect(calls(['a', 'a', 'a', 'a']).trips).toEqual([]);
    const { trips, state } = calls(['a', 'a', 'a', 'a', 'a']);
    expect(trips).toEqual(['the same bash call `ls -1` returned the same output 5 times in a row']);
    expect(state.tripped).toBe(trips[0]);
  });

  it('does not trip on honest repeated work: the same command with a changing output', () => {
    // A test run while fixing code: same command, a different failure each time, then a pass.
    const outputs = [
      '3 failed',
      '2 failed',
      '2 failed',
      '1 failed',
      '1 failed',
      '0 failed',
      'ok',
      'ok',
      'ok',
    ];
    expect(calls(outputs, 'bash {"command":"npm test"}').trips).toEqual([]);
    // Another call in between starts the count again.
    let state = INITIAL_BREAKER;
    for (let i = 0; i < 12; i++) {
      const outcome = afterToolCall(state, settings, {
        summary: 'x',
        call: i % 2 === 0 ? 'bash a' : 'bash b',
        output: 'same',
      });
      expect(outcome.trip).toBeNull();
      state = outcome.state;
    }
  });

  it('trips after three model turns without a tool call, and a tool call resets the count', () => {
    let state = INITIAL_BREAKER;
    const turn = (toolCalls: number, atMs: number) => {
      const outcome = afterModelTurn(state, settings, { toolCalls, atMs, costUsd: 0, tokens: 10 });
      state = outcome.state;
      return outcome.trip;
    };
    expect([turn(0, 1), turn(0, 2), turn(1, 3), turn(0, 4), turn(0, 5)]).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(turn(0, 6)).toBe('3 model turns in a row without a tool call or finish');
  });

  it('trips on spend per minute over a sliding window only when a rate is set', () => {
    const rate = breakerSettings({ maxUsdPerMinute: 1 });
    let state = INITIAL_BREAKER;
    const spend = (atMs: number, costUsd: number, rules = rate) => {
      const outcome = afterModelTurn(state, rules, { toolCalls: 1, atMs, costUsd, tokens: 0 });
      state = outcome.state;
      return outcome.trip;
    };
    expect(spend(0, 0.6)).toBeNull();
    // 0.6 fell out of the window: 0.6 in the last minute.
    expect(spend(61_000, 0.6)).toBeNull();
    expect(spend(70_000, 0.5)).toMatch(
      /^\$1\.1000 spent in the last 1 minute\(s\), over breaker.max_usd_per_minute 1$/,
    );
    state = INITIAL_BREAKER;
    for (let i = 0; i < 10; i++) expect(spend(i, 100, settings)).toBeNull();
  });

  it('tells the model once, on unpause, why it was stopped, and starts counting again', () => {
    const tripped = calls(['a', 'a', 'a', 'a', 'a']).state;
    const { state, note } = afterUnpause(tripped);
    expect(note).toContain('the same bash call `ls -1` returned the same output 5 times in a row');
    expect(state).toEqual(INITIAL_BREAKER);
    expect(afterUnpause(state).note).toBeNull();
  });

  it('turns a count rule off with 0', () => {
    const off = breakerSettings({ repeatLimit: 0, idleTurns: 0 });
    let state = INITIAL_BREAKER;
    for (let i = 0; i < 20; i++) {
      const call = afterToolCall(state, off, { summary: 's', call: 'c', output: 'o' });
      expect(call.trip).toBeNull();
      const turn = afterModelTurn(call.state, off, { toolCalls: 0, atMs: i, costUsd: 0, tokens: 0 });
      expect(turn.trip).toBeNull();
      state = turn.state;
    }
  });
});
