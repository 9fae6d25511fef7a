import { describe, expect, it } from 'vitest';
import { fullReplays } from '../../worker/metrics-endpoint';

describe('goalrun_workflow_full_replays_total', () => {
  it("sums the SDK's sticky cache misses over their labels", () => {
    const sdk = [
      '# TYPE temporal_sticky_cache_miss counter',
      'temporal_sticky_cache_miss{namespace="default",task_queue="a"} 3',
      'temporal_sticky_cache_miss{namespace="default",task_queue="b"} 4',
      'temporal_sticky_cache_hit{namespace="default"} 99',
    ].join('\n');
    expect(fullReplays(sdk)).toContain('goalrun_workflow_full_replays_total 7\n');
  });

  it('says nothing before the SDK has counted', () => {
    expect(fullReplays('# Temporal SDK metrics unavailable: fetch failed\n')).toBe('');
  });
});

describe('goalrun_workflow_full_replays_total before any miss', () => {
  it('is zero once the SDK serves metrics without the counter', () => {
    expect(fullReplays('temporal_sticky_cache_hit{namespace="default"} 5\n')).toContain(
      'goalrun_workflow_full_replays_total 0\n',
    );
  });
});
