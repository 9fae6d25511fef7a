/**
 * Issue 10: a goal step costs Temporal at most 4 KiB of payload and 13 history events, however big
 * the tool outputs and the transcript get (activities pass references, not bodies). A 30-step goal
 * whose tool prints 50 KB a step is measured between consecutive model steps.
 */
import { describe, expect, it } from 'vitest';
import { PATCH_MARKER_NAME, patchIdOfMarker } from '../../core/patch-procedure';
import { PATCH_SETS } from '../../workflows/patch-sets';
import { PATCHES } from '../../workflows/patches';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { activitySummary, fetchHistory, payloadSizes } from '../support/history';

const STEPS = 30;
const KiB = 1024;
/** Payload bytes one step may add to the history (inputs, results, markers, search attributes). */
const MAX_PAYLOAD_BYTES_PER_STEP = 4 * KiB;
/** Events one step may add: the floor is 12 (two activities, each with its workflow task). */
const MAX_EVENTS_PER_STEP = 13;

/** One step as the history holds it: from one model step's scheduling to the next one's. */
interface StepCost {
  step: number;
  events: number;
  payloadBytes: number;
  eventBytes: number;
}

describe('history size', () => {
  it('costs at most 4 KiB of payload and 13 events a step while the transcript grows by 50 KB a step', async () => {
    const t = goalTestEnv('history');
    const bigOutput = {
      name: 'bash',
      // The step's time at the end: the same call with the same output five times in a row would trip
      // the runaway breaker (a loop), and this is honest repeated work.
      args: { command: "head -c 51200 /dev/zero | tr '\\0' x | fold -w 100; date +%s%N" },
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

    // A new run records the newest patch set's marker (one TemporalChangeVersion upsert), and one per
    // patch added since, not one per patch.
    const newer = PATCHES.filter(
      (patch) => patch.stage === 'patched' && !PATCH_SETS[0].covers.includes(patch.id as never),
    );
    const markers = events
      .map(({ event }) => event.markerRecordedEventAttributes)
      .filter((marker) => marker?.markerName === PATCH_MARKER_NAME)
      .map((marker) => patchIdOfMarker(marker?.details));
    expect(markers).toEqual([PATCH_SETS[0].id, ...newer.map((patch) => patch.id)]);
    const versionUpserts = events.filter(
      ({ event }) =>
        event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields
          ?.TemporalChangeVersion,
    );
    expect(versionUpserts).toHaveLength(1 + newer.length);
    // The start set GoalStatus running and GoalIteration 1, which the goal kept until it completed:
    // its only status upsert is its end (patch start-attributes-published).
    const statusUpserts = events
      .map(
        ({ event }) => event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields,
      )
      .filter((fields) => fields?.GoalStatus)
      .map((fields) => Buffer.from(fields?.GoalStatus?.data ?? []).toString());
    expect(statusUpserts).toEqual(['"completed"']);

    const steps = stepCosts(events);
    // Steps 1..29 each have a following model step to measure against.
    expect(steps.map((cost) => cost.step)).toEqual(Array.from({ length: STEPS - 1 }, (_, i) => i + 1));
    const table = steps.map((c) => `${c.step}:${c.events}ev/${c.payloadBytes}B`).join(' ');
    const worstPayload = Math.max(...steps.map((cost) => cost.payloadBytes));
    const worstEvents = Math.max(...steps.map((cost) => cost.events));
    expect(worstPayload, table).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES_PER_STEP);
    expect(worstEvents, table).toBeLessThanOrEqual(MAX_EVENTS_PER_STEP);

    // Flat: the last steps cost no more than the first ones, though the transcript grew by 1.4 MB.
    const mean = (list: StepCost[]) => list.reduce((sum, cost) => sum + cost.payloadBytes, 0) / list.length;
    const early = mean(steps.slice(1, 10));
    const late = mean(steps.slice(-9));
    expect(late, table).toBeLessThanOrEqual(early * 1.05);

    const total = events.reduce((sum, { bytes }) => sum + bytes, 0);
    console.log(
      `history: ${events.length} events, ${total} bytes; per step at most ${worstEvents} events and ` +
        `${worstPayload} payload bytes (mean ${Math.round(mean(steps))}, steps 2-10 ${Math.round(early)}, ` +
        `21-29 ${Math.round(late)}); largest payload ${largest} bytes\n${table}`,
    );
  });
});

/** Events, payload bytes and encoded bytes from each model step's scheduling to the next one's. */
function stepCosts(events: Awaited<ReturnType<typeof fetchHistory>>): StepCost[] {
  const starts: Array<{ step: number; index: number }> = [];
  events.forEach(({ event }, index) => {
    const step = /^model step (\d+) /.exec(activitySummary(event) ?? '')?.[1];
    if (step && !starts.some((start) => start.step === Number(step))) {
      starts.push({ step: Number(step), index });
    }
  });
  const costs: StepCost[] = [];
  for (let i = 0; i + 1 < starts.length; i++) {
    const slice = events.slice(starts[i].index, starts[i + 1].index);
    costs.push({
      step: starts[i].step,
      events: slice.length,
      payloadBytes: slice.reduce((sum, { event }) => sum + sum0(payloadSizes(event)), 0),
      eventBytes: slice.reduce((sum, { bytes }) => sum + bytes, 0),
    });
  }
  return costs;
}

function sum0(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0);
}
