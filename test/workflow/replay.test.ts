/**
 * Replays committed histories of real goals against today's workflow code. A change that would
 * break running goals (non-determinism) fails here before it ships. Regenerate the fixture with
 * `GOALRUN_SAVE_HISTORY_FIXTURE=1 npx vitest run test/workflow/task-graph-goal.test.ts` only when
 * a change is meant to be incompatible (and then version the workflow with patched()).
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';

const BUNDLE = path.resolve(__dirname, '../../dist/workflow-bundle.js');
const FIXTURE = path.resolve(__dirname, '../fixtures/histories/task-graph-goal.json');

describe('saved goal histories', () => {
  const saved = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as unknown[];

  it('hold a cancelled run and its resumed run', () => {
    expect(saved).toHaveLength(2);
  });

  it.each(saved.map((history, index) => [index === 0 ? 'cancelled run' : 'resumed run', history]))(
    'replays the %s without a determinism violation',
    async (_name, json) => {
      const history = temporal.api.history.v1.History.fromObject(json as Record<string, unknown>);
      expect(history.events.length).toBeGreaterThan(20);
      await Worker.runReplayHistory({ workflowBundle: { codePath: BUNDLE } }, history, 'saved-goal');
    },
  );
});
