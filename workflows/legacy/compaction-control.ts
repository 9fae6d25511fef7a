/**
 * How users steer compaction on a running goal: the `compact` and `setAutoCompact` updates (and the
 * /compact app command) and the `policy` query. A manual compaction is queued and run by the main
 * loop between steps, never inside an update handler, so it cannot race a step over the same state.
 */
import { condition, setHandler } from '@temporalio/workflow';
import { setAutoCompact } from '../../core/compaction/failure-budget';
import { FINAL_STATUSES, noteAction } from '../../core/goal';
import {
  autoCompact,
  type CompactionHost,
  type CompactionResult,
  compact,
  compactionOf,
} from '../compaction';
import { compactUpdate, policyQuery, setAutoCompactUpdate } from '../definitions';
import { policyOf, policyWithStateSize } from '../policy';

/** What the main loop and the steering handler use of the compaction control. */
export interface CompactionControl {
  /** Queues a manual compaction for the next step boundary and waits for its result. */
  request(topic?: string): Promise<CompactionResult>;
  /** Whether manual compactions wait in the queue. */
  hasPending(): boolean;
  /** Runs the queued manual compactions (before a step, or before continuing as new). */
  runPending(stepNumber: number): Promise<void>;
  /** Runs the queued compactions, then the auto-compact check (spec S-AUTO). */
  beforeStep(stepNumber: number): Promise<void>;
}

/** Registers the compaction handlers and returns the control the loop runs. */
export function setupCompactionControl(host: CompactionHost): CompactionControl {
  const pending: Array<{ id: number; topic?: string }> = [];
  const results = new Map<number, CompactionResult>();
  let counter = 0;

  const request = async (topic?: string): Promise<CompactionResult> => {
    const id = ++counter;
    pending.push({ id, topic: topic || undefined });
    await condition(() => results.has(id));
    const result = results.get(id)!;
    results.delete(id);
    return result;
  };

  const runPending = async (stepNumber: number): Promise<void> => {
    while (pending.length > 0) {
      const next = pending.shift()!;
      results.set(next.id, await compact(host, stepNumber, { manual: true, topic: next.topic }));
    }
  };

  setHandler(compactUpdate, (topic: string) => request(topic), {
    validator: (_topic: string) => {
      const { status } = host.get();
      if (FINAL_STATUSES.includes(status)) throw new Error(`the goal is ${status}; nothing to compact`);
    },
  });

  setHandler(setAutoCompactUpdate, (on: boolean) => {
    const state = host.get();
    const compaction = compactionOf(state);
    host.set(
      noteAction(
        { ...state, compaction: { ...compaction, autoCompact: setAutoCompact(compaction.autoCompact, on) } },
        `auto-compact turned ${on ? 'on' : 'off'}`,
      ),
    );
    return policyOf(host.get());
  });

  setHandler(policyQuery, () => policyWithStateSize(host.get()));

  return {
    request,
    hasPending: () => pending.length > 0,
    runPending,
    async beforeStep(stepNumber: number): Promise<void> {
      await runPending(stepNumber);
      await autoCompact(host, stepNumber);
    },
  };
}
