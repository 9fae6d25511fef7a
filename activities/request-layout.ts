/**
 * Where each part of a model step's request goes, for the providers' prompt caches. A provider
 * reuses the longest prefix it has seen, so everything fixed between compactions comes first (tool
 * schemas, the system prompt, the first message and the summary, then the transcript, which only
 * grows) and what changes from step to step comes last: the task list, rendered fresh every request
 * (no compaction can drop it), after the transcript instead of in the system prompt.
 */
import type { PromptCacheTtl } from './providers/types';

/** Names the request layout; `tasks-in-system` is the layout before 0.3.0, kept for scripts/bench-cache.js. */
export const PROMPT_LAYOUT_ENV = 'GOALRUN_PROMPT_LAYOUT';

/** `stable-prefix`: the task list after the transcript. `tasks-in-system`: in the system prompt. */
export type PromptLayout = 'stable-prefix' | 'tasks-in-system';

/** The layout a worker uses: `stable-prefix` unless the environment names the old one. */
export function promptLayoutOf(env: Record<string, string | undefined> = process.env): PromptLayout {
  return env[PROMPT_LAYOUT_ENV] === 'tasks-in-system' ? 'tasks-in-system' : 'stable-prefix';
}

/** The last message of a request when the goal has a task list: what the model should work from now. */
export function taskListReminder(tasks: string): string {
  return `[goalrun] Your current task list (todo-write), as of this step:\n${tasks}`;
}

/** Where the rendered task list goes in a layout. */
export function placeTaskList(
  layout: PromptLayout,
  tasks: string | null,
): { inSystem: string | null; tail: string | undefined } {
  if (!tasks) return { inSystem: null, tail: undefined };
  return layout === 'tasks-in-system'
    ? { inSystem: tasks, tail: undefined }
    : { inSystem: null, tail: taskListReminder(tasks) };
}

/** A 5-minute cache entry expires before the next step when steps are this far apart. */
export const LONG_STEP_GAP_MS = 4 * 60_000;

/**
 * The lifetime of the cache entries this request writes. Anthropic's default entry lives 5 minutes
 * (refreshed on every read); a goal whose last step was minutes ago (long test runs, waits) would
 * find it gone, so its entries are written for an hour (they cost more to write: the card's
 * `cacheWrite1hPerMTok`). `previousAnswerAt` is when the previous step's answer was stored.
 */
export function cacheTtlFor(previousAnswerAt: Date | undefined, nowMs: number): PromptCacheTtl {
  if (!previousAnswerAt) return '5m';
  return nowMs - previousAnswerAt.getTime() > LONG_STEP_GAP_MS ? '1h' : '5m';
}
