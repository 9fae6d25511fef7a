/**
 * Replays committed histories of real goals against today's workflow code. A change that would
 * break running goals (non-determinism) fails here before it ships. Regenerate the fixtures with
 * `GOALRUN_SAVE_HISTORY_FIXTURE=1 npx vitest run test/workflow/task-graph-goal.test.ts test/workflow/compaction.test.ts test/e2e/steering.test.ts` only when
 * a change is meant to be incompatible (and then version the workflow with patched()).
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';

const BUNDLE = path.resolve(__dirname, '../../dist/workflow-bundle.js');
const FIXTURES = path.resolve(__dirname, '../fixtures/histories');

/** Every saved history: [fixture file, index in it, history JSON]. */
const saved = fs
  .readdirSync(FIXTURES)
  .filter((file) => file.endsWith('.json'))
  .flatMap((file) =>
    (JSON.parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8')) as unknown[]).map(
      (history, index) => [`${file} #${index + 1}`, history] as const,
    ),
  );

describe('saved goal histories', () => {
  it('include a cancelled run, its resumed run, a run that recovered from an overflow, and every app command', () => {
    expect(saved.map(([name]) => name)).toEqual([
      'compaction-overflow.json #1',
      'steering-commands.json #1',
      'task-graph-goal.json #1',
      'task-graph-goal.json #2',
    ]);
  });

  it.each(saved)('replays %s without a determinism violation', async (_name, json) => {
    const history = temporal.api.history.v1.History.fromObject(json as Record<string, unknown>);
    expect(history.events.length).toBeGreaterThan(20);
    await Worker.runReplayHistory({ workflowBundle: { codePath: BUNDLE } }, history, 'saved-goal');
  });
});
