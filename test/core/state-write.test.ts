import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyStateWrite, StateWriteTracker } from '../../core/state-write';

describe('state writes', () => {
  it('sends only the fields that changed, one level into the compaction state', () => {
    const tracker = new StateWriteTracker();
    const state = {
      steps: 1,
      tasks: [{ id: 'task-1' }],
      recent: ['a'],
      ledger: [1, 2],
      compaction: { plan: { stubSeqs: [] as number[] }, lastInputTokens: 10 },
    };
    const first = tracker.writeFor(state, true);
    expect(first.full).toBe(true);
    expect(Object.keys(first.set).sort()).toEqual(['compaction', 'recent', 'steps', 'tasks']);
    tracker.committed(first);
    const next = {
      ...state,
      steps: 2,
      recent: ['a', 'b'],
      compaction: { ...state.compaction, lastInputTokens: 20 },
    };
    expect(tracker.writeFor(next).set).toEqual({ steps: 2, 'compaction.lastInputTokens': 20 });
  });

  it('a write that did not reach the store is sent again', () => {
    const tracker = new StateWriteTracker();
    tracker.committed(tracker.writeFor({ steps: 1 }, true));
    expect(tracker.writeFor({ steps: 2 }).set).toEqual({ steps: 2 });
    // not committed: the next write still carries it
    expect(tracker.writeFor({ steps: 2 }).set).toEqual({ steps: 2 });
  });

  it('applying the writes gives the state itself (property)', () => {
    const field = fc.oneof(fc.integer(), fc.string(), fc.array(fc.integer(), { maxLength: 3 }));
    const stateArb = fc.record({
      a: field,
      b: field,
      compaction: fc.record({ x: field, y: field }),
    });
    fc.assert(
      fc.property(fc.array(stateArb, { minLength: 1, maxLength: 6 }), (states) => {
        const tracker = new StateWriteTracker();
        let saved: Record<string, unknown> | null = null;
        states.forEach((state, index) => {
          const write = tracker.writeFor(state, index === 0);
          saved = applyStateWrite(saved, write);
          tracker.committed(write);
          expect(saved).toEqual(JSON.parse(JSON.stringify(state)));
        });
      }),
    );
  });
});
