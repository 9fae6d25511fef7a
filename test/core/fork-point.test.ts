import { describe, expect, it } from 'vitest';
import {
  endOfStep,
  FORK_ORIGIN_KEY,
  forkOriginOf,
  forkReason,
  remapStateSeqs,
  stateAtCut,
  stepsIn,
} from '../../core/fork-point';
import type { TranscriptEntry } from '../../core/messages';

function entry(seq: number, key: string, role: 'user' | 'assistant' | 'tool'): TranscriptEntry {
  return { seq, key, message: { role, content: [] } } as unknown as TranscriptEntry;
}

const transcript = [
  entry(10, 'initial', 'user'),
  entry(11, 'step:1@1', 'assistant'),
  entry(12, 'result:a', 'tool'),
  entry(13, 'step:2@1', 'assistant'),
  entry(14, 'result:b', 'tool'),
  entry(15, 'result:c', 'tool'),
  entry(16, 'notice:1@1', 'user'),
  entry(17, 'step:3@1', 'assistant'),
];

describe('fork point', () => {
  it('ends a step after the tool results that follow its assistant message', () => {
    expect(stepsIn(transcript)).toEqual([1, 2, 3]);
    expect(endOfStep(transcript, 1)).toBe(12);
    expect(endOfStep(transcript, 2)).toBe(15);
    expect(endOfStep(transcript, 3)).toBe(17);
    expect(endOfStep(transcript, 4)).toBeNull();
  });

  it('starts from the state that covers the most without passing the cut', () => {
    const states = [{ checkpointSeq: 10, steps: 0 }, { checkpointSeq: 14, steps: 2 }, { checkpointSeq: 17 }];
    expect(stateAtCut(states, 15)).toEqual({ checkpointSeq: 14, steps: 2 });
    expect(stateAtCut(states, 12)).toEqual({ checkpointSeq: 10, steps: 0 });
    expect(stateAtCut(states, 5)).toBeNull();
    expect(stateAtCut([{ steps: 0 }, { checkpointSeq: 17 }], 12)).toEqual({ steps: 0, checkpointSeq: 0 });
  });

  it('moves every seq of the state to the copies', () => {
    const map = new Map([
      [10, 100],
      [11, 101],
      [12, 102],
      [14, 104],
    ]);
    const state = {
      checkpointSeq: 13,
      ledger: [{ seq: 10 }],
      compaction: {
        lastCoveredSeq: 12,
        plan: {
          firstSeq: 10,
          summarySeq: 11,
          keptSeqs: [12, 99],
          fromSeq: 13,
          stubSeqs: [14],
          elideArgsSeqs: [],
        },
      },
    };
    expect(remapStateSeqs(state, map)).toEqual({
      checkpointSeq: 102,
      ledger: [],
      compaction: {
        lastCoveredSeq: 102,
        plan: {
          firstSeq: 100,
          summarySeq: 101,
          keptSeqs: [102],
          fromSeq: 104,
          stubSeqs: [104],
          elideArgsSeqs: [],
        },
      },
    });
  });
});

describe('a fork that has not run yet', () => {
  const origin = { parentId: '3f2a9c0d1e4b-20261130T152151123Z', atStep: 2 };

  it('is known by the origin its saved state records', () => {
    expect(forkOriginOf({ status: 'cancelled', [FORK_ORIGIN_KEY]: origin })).toEqual(origin);
  });

  it('is known by its row while it is cancelled with the reason a fork is made with (older forks)', () => {
    const reason = forkReason(origin);
    expect(reason).toBe('forked from 3f2a9c0d1e4b-20261130T152151123Z at step 2');
    expect(forkOriginOf({ status: 'cancelled' }, { status: 'cancelled', reason })).toEqual(origin);
    // Once it ran, its row says so: it is a session like any other.
    expect(forkOriginOf({ status: 'running' }, { status: 'running', reason })).toBeNull();
  });

  it('is not any other stopped session', () => {
    expect(
      forkOriginOf({ status: 'cancelled' }, { status: 'cancelled', reason: 'cancelled by user' }),
    ).toBeNull();
    expect(forkOriginOf(null)).toBeNull();
    expect(forkOriginOf({ [FORK_ORIGIN_KEY]: { parentId: 'x' } })).toBeNull();
  });
});
