/** The worker's metric bookkeeping that needs no server: notice parsing and the endpoint address. */
import { describe, expect, it } from 'vitest';
import { compactionNotice } from '../../core/compaction/notice';
import { compactionStageOf } from '../../worker/metrics';
import { DEFAULT_METRICS_HOST, parseMetricsAddress } from '../../worker/metrics-endpoint';

describe('compactionStageOf', () => {
  // The counter reads the notice a compaction writes: a change of its wording must fail here.
  it('reads the stage from the notices core/compaction/notice.ts writes', () => {
    const base = { before: 90_000, after: 30_000, stubbed: 0, elided: 0, summarized: 0 };
    expect(compactionStageOf(`[goalrun] ${compactionNotice({ ...base, stubbed: 3 })}`)).toBe('pruned');
    expect(compactionStageOf(`[goalrun] ${compactionNotice({ ...base, elided: 1 })}`)).toBe('pruned');
    expect(compactionStageOf(`[goalrun] ${compactionNotice({ ...base, summarized: 1 })}`)).toBe('summarized');
    expect(
      compactionStageOf(
        `[goalrun] ${compactionNotice({ ...base, stubbed: 2, summarized: 40, forced: true })}`,
      ),
    ).toBe('summarized');
  });

  it('counts a discarded compaction and nothing else', () => {
    expect(
      compactionStageOf('[goalrun] compaction discarded: it would not shrink the context (1 → 2 tokens)'),
    ).toBe('discarded');
    expect(compactionStageOf('[goalrun] model switched to openai:gpt-4o')).toBeNull();
    expect(compactionStageOf('[goalrun] auto-compact paused after 3 summarizer failures')).toBeNull();
  });
});

describe('parseMetricsAddress', () => {
  it('takes a port, host:port or [v6]:port; a bare port stays on this machine', () => {
    expect(parseMetricsAddress('9464')).toEqual({ host: DEFAULT_METRICS_HOST, port: 9464 });
    expect(parseMetricsAddress('0.0.0.0:9464')).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(parseMetricsAddress('[::1]:1')).toEqual({ host: '::1', port: 1 });
    expect(parseMetricsAddress('65535').port).toBe(65_535);
  });

  it('names the flag when the value is not a port', () => {
    for (const bad of ['', 'abc', '0', '65536', 'host:', ':9464', '94.64']) {
      expect(() => parseMetricsAddress(bad), bad).toThrow(/--metrics-port/);
    }
  });
});
