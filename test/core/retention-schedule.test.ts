import { describe, expect, it } from 'vitest';
import { DEFAULT_RETENTION_KEEP } from '../../core/retention';
import { retentionInputOf, retentionScheduleId } from '../../core/retention-schedule';
import { configSchema } from '../../worker/config-schema';
import { mergeProjectConfig } from '../../worker/project-config';

describe('retention schedule input', () => {
  it('carries the configured rule, keep defaulting as for clean', () => {
    expect(retentionInputOf({ older_than: '30d', keep: 2 })).toEqual({ olderThan: '30d', keep: 2 });
    expect(retentionInputOf({})).toEqual({ keep: DEFAULT_RETENTION_KEEP });
    expect(() => retentionInputOf({ older_than: 'a month' })).toThrow(/older_than/);
  });

  it('is one schedule per task queue (so per store)', () => {
    expect(retentionScheduleId('goalrun-abc')).toBe('goalrun-abc-retention');
    expect(retentionScheduleId('goalrun-abc')).not.toBe(retentionScheduleId('goalrun-def'));
  });

  it('is checked by the config schema and refused in a project config', () => {
    expect(configSchema().safeParse({ retention: { older_than: '30d', keep: 0 } }).success).toBe(true);
    expect(configSchema().safeParse({ retention: { older_than: 'soon' } }).success).toBe(false);
    expect(configSchema().safeParse({ retention: { keep: -1 } }).success).toBe(false);
    expect(configSchema().safeParse({ retention: { keep: 1, every: '1d' } }).success).toBe(false);
    const merged = mergeProjectConfig({}, { retention: { keep: 1 } });
    expect(merged.config.retention).toBeUndefined();
    expect(merged.ignored.join('')).toMatch(/retention \(only \$GOALRUN_HOME\/config\.json may set it/);
  });
});
