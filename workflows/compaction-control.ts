/**
 * How users steer compaction on a running goal: the `compact` and `setAutoCompact` updates and the
 * `policy` query. A manual compaction is queued and run by the main loop between steps, never
 * inside the update handler, so it cannot race a step over the same state.
 */
import { condition, setHandler } from '@temporalio/workflow';
import { setAutoCompact } from '../core/compaction/failure-budget';
import { FINAL_STATUSES, noteAction } from '../core/goal';
import { autoCompact, type CompactionHost, type CompactionResult, compact, compactionOf } from './compaction';
import { compactUpdate, policyQuery, setAutoCompactUpdate } from './definitions';
import { policyOf } from './policy';

/** Registers the compaction handlers; returns what the main loop runs before each model step. */
export function setupCompactionControl(host: CompactionHost, enabled: boolean) {
  const pending: Array<{ id: number; topic?: string }> = [];
  const results = new Map<number, CompactionResult>();
  let counter = 0;

  setHandler(
    compactUpdate,
    async (topic: string) => {
      const id = ++counter;
      pending.push({ id, topic: topic || undefined });
      await condition(() => results.has(id));
      const result = results.get(id)!;
      results.delete(id);
      return result;
    },
    {
      validator: (_topic: string) => {
        if (!enabled) throw new Error('this goal was started by a goalrun without compaction');
        const { status } = host.get();
        if (FINAL_STATUSES.includes(status)) throw new Error(`the goal is ${status}; nothing to compact`);
      },
    },
  );

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

  setHandler(policyQuery, () => policyOf(host.get()));

  return {
    /** Runs queued manual compactions, then the auto-compact check (spec S-AUTO). */
    async beforeStep(stepNumber: number): Promise<void> {
      if (!enabled) return;
      while (pending.length > 0) {
        const request = pending.shift()!;
        results.set(request.id, await compact(host, stepNumber, { manual: true, topic: request.topic }));
      }
      await autoCompact(host, stepNumber);
    },
  };
}
