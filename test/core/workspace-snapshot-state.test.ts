/** The pure rules of a goal's snapshot state (core/workspace-snapshot-state.ts): caps, notes, the stop. */
import { describe, expect, it } from 'vitest';
import {
  afterSnapshot,
  DEFAULT_SNAPSHOT_MAX_FILE_BYTES,
  DEFAULT_SNAPSHOT_MAX_TOTAL_BYTES,
  snapshotCaps,
  startSnapshots,
} from '../../core/workspace-snapshot-state';

const repository = { top: '/w', gitDir: '/w/.git', commonDir: '/w/.git' };
const MiB = 1024 * 1024;

describe('snapshot state', () => {
  it('takes the caps from the goal, in MiB, with 10 MiB and 1 GiB as defaults', () => {
    expect(snapshotCaps(undefined)).toEqual({
      maxFileBytes: DEFAULT_SNAPSHOT_MAX_FILE_BYTES,
      maxTotalBytes: DEFAULT_SNAPSHOT_MAX_TOTAL_BYTES,
    });
    expect(DEFAULT_SNAPSHOT_MAX_FILE_BYTES).toBe(10 * MiB);
    expect(DEFAULT_SNAPSHOT_MAX_TOTAL_BYTES).toBe(1024 * MiB);
    expect(snapshotCaps({ maxFileMib: 2, maxTotalMib: 5 })).toEqual({
      maxFileBytes: 2 * MiB,
      maxTotalBytes: 5 * MiB,
    });
  });

  it('counts bytes, says once which files were left out, and stops at the total cap with one notice', () => {
    const caps = { maxFileBytes: MiB, maxTotalBytes: 3 * MiB };
    let state = startSnapshots(repository);
    const skipped = { count: 3, names: ['a.iso', 'b.iso'] };
    const first = afterSnapshot(state, { addedBytes: MiB, skipped }, caps);
    expect(first.note).toBe(
      'the snapshot left out 3 files over 1 MiB (snapshot_max_file_mib): a.iso, b.iso, …',
    );
    expect(first.notice).toBeNull();
    state = first.state;
    const same = afterSnapshot(state, { addedBytes: MiB, skipped }, caps);
    expect(same.note).toBeNull();
    state = same.state;
    expect(state.bytes).toBe(2 * MiB);
    const over = afterSnapshot(state, { addedBytes: MiB + 1 }, caps);
    expect(over.state.stopped).toMatch(
      /reached 3\.0 MiB, over their cap of 3 MiB \(snapshot_max_total_mib\)/,
    );
    expect(over.notice).toMatch(/^workspace snapshots stopped: /);
    expect(afterSnapshot(over.state, { addedBytes: 0 }, caps).notice).toBeNull();
  });
});
