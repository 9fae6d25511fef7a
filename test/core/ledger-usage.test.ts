import { describe, expect, it } from 'vitest';
import { appendLedger, type LedgerEntry, lastSeqOf, ledgerTokens } from '../../core/ledger';
import { IMAGE_TOKEN_ESTIMATE, messageTokens } from '../../core/ledger-entry';
import type { StoredMessage } from '../../core/messages';
import { addRequestUsage, EMPTY_USAGE, type RequestUsage } from '../../core/usage';

function entry(seq: number, tokens = 10, role: LedgerEntry['role'] = 'user'): LedgerEntry {
  return { seq, role, tokens };
}

describe('appendLedger', () => {
  it('appends a new entry without mutating the ledger', () => {
    const ledger = [entry(1)];
    const next = appendLedger(ledger, entry(2, 5, 'assistant'));
    expect(next).toEqual([entry(1), entry(2, 5, 'assistant')]);
    expect(ledger).toEqual([entry(1)]);
  });

  it('ignores an entry whose seq is already known (a replayed activity result)', () => {
    const ledger = [entry(1), entry(2)];
    const next = appendLedger(ledger, { ...entry(2, 999, 'tool'), toolName: 'bash' });
    // The very same array comes back, and the first entry wins.
    expect(next).toBe(ledger);
    expect(next[1]).toEqual(entry(2));
  });

  it('keeps entries in arrival order, not seq order', () => {
    let ledger: LedgerEntry[] = [];
    for (const seq of [3, 1, 2, 1, 3]) ledger = appendLedger(ledger, entry(seq));
    expect(ledger.map((e) => e.seq)).toEqual([3, 1, 2]);
  });
});

describe('lastSeqOf', () => {
  it('is 0 for an empty ledger', () => {
    expect(lastSeqOf([])).toBe(0);
  });

  it('is the highest seq, wherever it is', () => {
    expect(lastSeqOf([entry(4), entry(9), entry(7)])).toBe(9);
  });
});

describe('ledgerTokens', () => {
  it('is 0 for an empty ledger and sums tokens otherwise', () => {
    expect(ledgerTokens([])).toBe(0);
    expect(ledgerTokens([entry(1, 10), entry(2, 0), entry(3, 32)])).toBe(42);
  });
});

function request(inputTokens: number, outputTokens: number, cacheRead = 0, cacheWrite = 0): RequestUsage {
  return { inputTokens, outputTokens, cacheReadTokens: cacheRead, cacheWriteTokens: cacheWrite };
}

describe('addRequestUsage', () => {
  it('EMPTY_USAGE is all zeros', () => {
    expect(Object.values(EMPTY_USAGE).every((value) => value === 0)).toBe(true);
  });

  it('adds one request to empty totals', () => {
    expect(addRequestUsage(EMPTY_USAGE, request(100, 20, 60, 5))).toEqual({
      contextTokens: 120,
      totalTokens: 120,
      inputTokens: 100,
      outputTokens: 20,
      cacheReadTokens: 60,
      cacheWriteTokens: 5,
      requests: 1,
    });
  });

  it('keeps occupancy as the largest single request while the totals sum', () => {
    let totals = EMPTY_USAGE;
    totals = addRequestUsage(totals, request(1_000, 100, 0, 1_000));
    totals = addRequestUsage(totals, request(5_000, 200, 4_000, 500));
    totals = addRequestUsage(totals, request(3_000, 50, 2_000, 0));
    expect(totals).toEqual({
      // The middle request was the biggest; the smaller one after it does not lower occupancy.
      contextTokens: 5_200,
      totalTokens: 1_100 + 5_200 + 3_050,
      inputTokens: 9_000,
      outputTokens: 350,
      cacheReadTokens: 6_000,
      cacheWriteTokens: 1_500,
      requests: 3,
    });
  });

  it('occupancy counts input plus output of one request, and ignores cache tokens', () => {
    // Cache reads are part of inputTokens already (providers report the total), so adding them again
    // would double count.
    const totals = addRequestUsage(EMPTY_USAGE, request(10, 5, 1_000_000, 1_000_000));
    expect(totals.contextTokens).toBe(15);
    expect(totals.totalTokens).toBe(15);
  });

  it('a request with no tokens still counts as a request', () => {
    const totals = addRequestUsage(addRequestUsage(EMPTY_USAGE, request(10, 1)), request(0, 0));
    expect(totals).toMatchObject({ requests: 2, contextTokens: 11, totalTokens: 11 });
  });

  it('does not mutate the totals it is given', () => {
    const before = { ...EMPTY_USAGE };
    addRequestUsage(EMPTY_USAGE, request(1, 1));
    expect(EMPTY_USAGE).toEqual(before);
  });
});

describe('the ledger entry of a first message with images', () => {
  it('counts each image at IMAGE_TOKEN_ESTIMATE, not at the length of its reference', () => {
    const text: StoredMessage = { role: 'user', content: [{ type: 'text', text: 'look' }] };
    const withImage: StoredMessage = {
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'image', imageId: 1, mediaType: 'image/png', bytes: 100, name: 'a.png' },
      ],
    };
    expect(messageTokens(withImage) - messageTokens(text)).toBeGreaterThanOrEqual(IMAGE_TOKEN_ESTIMATE);
  });
});
