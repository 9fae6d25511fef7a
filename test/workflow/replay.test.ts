/**
 * Replays every committed history of real goals, from every release folder in
 * test/fixtures/histories/<version>/, against today's workflow code. A change that would break goals
 * in flight (non-determinism) fails here before it ships. Histories are never regenerated: each
 * folder's SHA256SUMS pins its files. A release adds recordings of its own beside the old ones
 * (`GOALRUN_SAVE_HISTORY_FIXTURE=1 npx vitest run test/workflow/task-graph-goal.test.ts
 * test/workflow/compaction.test.ts test/e2e/steering.test.ts` writes them under the package version,
 * `npm run test:upgrade -- --record` those of the previous release's build).
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import {
  CHECKSUMS_FILE,
  fileSha256,
  HISTORY_FIXTURES,
  historyFiles,
  historyFixtures,
  PATCHES_FILE,
  recordedChecksums,
  releaseFolders,
  releasePatches,
} from '../support/history-fixtures';

const BUNDLE = path.resolve(__dirname, '../../dist/workflow-bundle.js');

/** Every saved history: [release/file #index, history JSON]. */
const saved = historyFixtures().flatMap(({ release, file, histories }) =>
  histories.map((history, index) => [`${release}/${file} #${index + 1}`, history] as const),
);

describe('saved goal histories', () => {
  it('keep the first recordings: a cancelled run, its resumed run, an overflow recovered, every app command', () => {
    expect(saved.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        'pre-0.1.0/compaction-overflow.json #1',
        'pre-0.1.0/steering-commands.json #1',
        'pre-0.1.0/task-graph-goal.json #1',
        'pre-0.1.0/task-graph-goal.json #2',
      ]),
    );
  });

  it.each(releaseFolders())(
    '%s: names its patches, and its histories are the bytes first committed',
    (release) => {
      expect(fs.existsSync(path.join(HISTORY_FIXTURES, release, PATCHES_FILE))).toBe(true);
      expect(releasePatches(release).release).toBe(release);
      const sums = recordedChecksums(release);
      const files = historyFiles(release);
      expect(files.length, `${release} holds no history`).toBeGreaterThan(0);
      // A file removed, added without its checksum, or regenerated fails here.
      expect([...sums.keys()].sort(), `${release}/${CHECKSUMS_FILE} lists every history`).toEqual(files);
      for (const file of files) {
        expect(fileSha256(path.join(HISTORY_FIXTURES, release, file)), `${release}/${file}`).toBe(
          sums.get(file),
        );
      }
    },
  );

  it.each(saved)('replays %s without a determinism violation', async (name, json) => {
    const history = temporal.api.history.v1.History.fromObject(json as Record<string, unknown>);
    // Whole goals (the first recordings) or goals caught in flight (upgrade-*: some stop early, at a wait).
    expect(history.events.length).toBeGreaterThan(name.includes('/upgrade-') ? 5 : 20);
    expect(history.events.some((event) => event.workflowTaskCompletedEventAttributes)).toBe(true);
    await Worker.runReplayHistory({ workflowBundle: { codePath: BUNDLE } }, history, 'saved-goal');
  });
});
