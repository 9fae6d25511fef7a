/**
 * Acceptance 7: with 50 KB tool outputs over 30 steps, no Temporal payload exceeds 64 KiB and the
 * history bytes per step do not grow with the transcript (activities pass references, not bodies).
 */
import { describe, expect, it } from 'vitest';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { activitySummary, fetchHistory, payloadSizes } from '../support/history';

const STEPS = 30;
const KiB = 1024;

describe('history size', () => {
  it('stays flat per step while the transcript grows by 50 KB a step', async () => {
    const t = goalTestEnv('history');
    const bigOutput = {
      name: 'bash',
      args: { command: "head -c 51200 /dev/zero | tr '\\0' x | fold -w 100" },
    };
    const turns = [
      ...Array.from({ length: STEPS - 1 }, () => ({ toolCalls: [bigOutput] })),
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'printed a lot' } }] },
    ];
    const model = scriptedModel(t.home, turns);
    const result = await runCli(
      [
        'run',
        'print a lot',
        '--workspace',
        t.workspace,
        '--model',
        model,
        // A window the 1.5 MB transcript fits in: this test measures history, not compaction.
        '--context-window',
        '1000000',
        '--json',
      ],
      t.env,
      240_000,
    );
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status.steps).toBe(STEPS);

    const events = await fetchHistory(t.temporalAddress, status.workflowId);
    const largest = Math.max(...events.flatMap(({ event }) => payloadSizes(event)));
    expect(largest).toBeLessThan(64 * KiB);

    // Cumulative history bytes at the start of each model step.
    const atStep = new Map<number, number>();
    let total = 0;
    for (const { event, bytes } of events) {
      const step = /^model step (\d+) /.exec(activitySummary(event) ?? '')?.[1];
      if (step && !atStep.has(Number(step))) atStep.set(Number(step), total);
      total += bytes;
    }
    expect(atStep.size).toBe(STEPS);
    // Compared after step 21, when the bounded recent-actions list in each checkpoint is full.
    const early = (atStep.get(25)! - atStep.get(21)!) / 4;
    const late = (atStep.get(29)! - atStep.get(25)!) / 4;
    // The transcript grows by ~50 KB a step; history per step must not follow it.
    expect(late).toBeLessThan(early * 1.1);
    // A sanity cap well under the 50 KB a step the transcript grows by.
    expect(late).toBeLessThan(12 * KiB);
    console.log(
      `history: ${events.length} events, ${total} bytes, ${Math.round(total / STEPS)} bytes/step (steps 21-25: ${Math.round(early)}, 25-29: ${Math.round(late)}), largest payload ${largest} bytes`,
    );
  });
});
