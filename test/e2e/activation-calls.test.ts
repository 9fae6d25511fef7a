/**
 * A goal's main loop goes on in the activation that delivers an activity's result (patch
 * serve-by-promise): the SDK then makes one pass over the blocked conditions per activation, which
 * finds nothing to unblock. Each call into a workflow's context starts a watchdog thread of Node's
 * (docs/performance.md), so an extra pass per activity was CPU spent on every step. The worker runs
 * as the CLI does, with a preload that counts its calls into workflow contexts by SDK function.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL } from '../../core/tool-names';
import { killAndWait, runCli, spawnCli, tempDir } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import { type ChatRequestBody, startOpenAITestServer } from '../support/openai-test-server';

const COUNTER = path.resolve(__dirname, '../support/vm-call-counter.cjs');
/** How long a goal may take to be seen done on a loaded machine (a worker's start, then its steps). */
const DONE_WITHIN_MS = 240_000;
/** File reads before the finish: each a model step and a tool activity. */
const READS = 4;

/** How many calls into workflow contexts the worker made, by SDK function, summed over its threads. */
function callsOf(dir: string): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const file of fs.readdirSync(dir)) {
    const counts: Record<string, number> = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    for (const [fn, n] of Object.entries(counts)) sum[fn] = (sum[fn] ?? 0) + n;
  }
  return sum;
}

/** Reads the notes file until READS tool results are in the request, then finishes. */
function reader(body: ChatRequestBody) {
  const results = (body.messages ?? []).filter((m) => m.role === 'tool').length;
  if (results < READS) {
    return { toolCalls: [{ name: TOOL.fileRead, args: { path: 'notes.txt' } }] };
  }
  return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'read it' } }] };
}

describe('calls into the workflow context per activation', { timeout: 400_000 }, () => {
  const counts = tempDir('vm-calls');
  const t = goalTestEnv('activation-calls', {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${COUNTER}`.trim(),
    GOALRUN_TEST_VM_CALLS: counts,
  });
  let model: Awaited<ReturnType<typeof startOpenAITestServer>>;
  let worker: ReturnType<typeof spawnCli>;

  beforeAll(async () => {
    fs.writeFileSync(path.join(t.workspace, 'notes.txt'), 'one line of notes\n');
    model = await startOpenAITestServer({ fallback: reader });
    worker = spawnCli(['worker'], t.env);
  });
  afterAll(async () => {
    if (worker) await killAndWait(worker, 'SIGTERM');
    await model?.close();
  });

  it('make one pass over the blocked conditions per activation, none more, for a goal of file reads', async () => {
    const started = await startGoal(t, model, 'read notes.txt four times, then finish');
    const watched = await runCli(['watch', started.sessionId, '--json'], t.env, DONE_WITHIN_MS);
    expect(watched.code, watched.stdout + watched.stderr).toBe(0);
    expect(JSON.parse(watched.stdout)).toMatchObject({ status: 'completed', steps: READS + 1 });

    const calls = callsOf(counts);
    // Each step's model call and file read were an activation each, plus the start and the end.
    expect(calls.activate, JSON.stringify(calls)).toBeGreaterThanOrEqual(2 * READS + 2);
    // A query (watch asks the goal) is an activation without a pass: at most one pass per activation.
    expect(calls.tryUnblockConditions, JSON.stringify(calls)).toBeLessThanOrEqual(calls.activate);
  });
});
