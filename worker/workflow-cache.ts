/**
 * How many goals a worker keeps in memory between their tasks (the SDK's sticky cache), from the
 * memory the worker may use. A goal that falls out of the cache is replayed from its first event at
 * its next task, so a fleet larger than the cache thrashes (issue 30: 1,000 goals on a cache of 200
 * made 5.3 full replays per goal and 2.3 times the CPU per step). Pure: the caller reads the machine.
 */

import { ConfigError } from '../core/errors';

const MIB = 1024 * 1024;

/**
 * Heap one cached goal holds, with margin: measured at 1,000 live goals of the concurrency bench
 * (docs/performance.md, "A thousand goals"), rounded up so a sized cache stays inside its budget.
 */
export const HEAP_PER_CACHED_GOAL_MIB = 1;
/** What a worker holds with no goal cached: the SDK, the bundle, the activities' modules and buffers. */
export const WORKER_BASE_MIB = 400;
/** Without a limit given or set by a cgroup, a worker plans for this share of the machine's memory. */
export const MACHINE_MEMORY_SHARE = 0.5;
/** Never fewer: a worker must hold the goals whose tasks it runs at once, and some more. */
export const MIN_CACHED_GOALS = 100;
/** Never more: beyond this a single worker's event loop, not memory, is what limits it. */
export const MAX_CACHED_GOALS = 10_000;
/**
 * Without AsyncContextFrame (Node before 24), every AsyncLocalStorage is an async hook, and every
 * cached goal that traces holds one enabled (the OpenTelemetry context store of its run): each
 * promise any goal makes then costs a step through all of them. Measured at 1,000 live goals on
 * Node 20 (docs/performance.md), a larger cache cost more CPU than the replays it saved; so a worker
 * that exports traces stops its cache at this many goals there. Untraced goals hold none.
 */
export const NO_CONTEXT_FRAME_MAX_CACHED_GOALS = 200;
/** Only this share of the V8 heap limit goes to the cache: the activities need the rest. */
const HEAP_LIMIT_SHARE = 0.6;

/** Where the worker's memory budget came from, as said in its start-up line and by `doctor`. */
export type MemorySource = '--max-memory' | 'GOALRUN_WORKER_MAX_MEMORY' | 'cgroup limit' | 'machine share';

/** The cache size a worker runs with, and why. */
export interface WorkflowCacheSizing {
  maxCachedWorkflows: number;
  /** The budget it was sized from, in bytes. */
  memoryBytes: number;
  source: MemorySource;
  /** Set when V8's heap limit, not the budget, capped the cache. */
  heapLimited: boolean;
  /** Set when this Node's AsyncLocalStorage with traces on, not the budget, capped the cache. */
  nodeLimited: boolean;
}

/** What the sizing reads off the process and machine. */
export interface MemoryFacts {
  /** `--max-memory` as given, or GOALRUN_WORKER_MAX_MEMORY. */
  given?: { value: string; from: '--max-memory' | 'GOALRUN_WORKER_MAX_MEMORY' };
  /** The cgroup's memory limit in bytes, when one is set (see cgroupMemoryLimit). */
  cgroupBytes?: number | null;
  totalMemoryBytes: number;
  /** V8's heap_size_limit of this process. */
  heapLimitBytes: number;
  /** Whether AsyncLocalStorage runs on AsyncContextFrame (Node 24, or 22 with the flag); default true. */
  asyncContextFrame?: boolean;
  /** Whether this worker exports traces, so the goals it runs are expected to trace; default false. */
  tracing?: boolean;
}

/** Thrown for a --max-memory (or GOALRUN_WORKER_MAX_MEMORY) that is not a size: a ConfigError, so every command that starts a worker exits 2 on it. */
export class MemorySizeError extends ConfigError {}

const UNITS: Record<string, number> = {
  '': MIB,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: MIB,
  mb: MIB,
  mib: MIB,
  g: 1024 * MIB,
  gb: 1024 * MIB,
  gib: 1024 * MIB,
};

/** Parses `2G`, `1536M`, `2GiB` or a bare number of MiB into bytes. */
export function parseMemorySize(value: string, name = '--max-memory'): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(value);
  const unit = match ? UNITS[match[2].toLowerCase()] : undefined;
  if (!match || unit === undefined) {
    throw new MemorySizeError(`${name} ${JSON.stringify(value)} is not a size: give it as 2G, 1536M or 2GiB`);
  }
  const bytes = Math.floor(Number(match[1]) * unit);
  const floor = (WORKER_BASE_MIB + MIN_CACHED_GOALS * HEAP_PER_CACHED_GOAL_MIB) * MIB;
  if (bytes < floor) {
    throw new MemorySizeError(
      `${name} ${value} is too small: a worker needs at least ${Math.ceil(floor / MIB)}M (${WORKER_BASE_MIB}M for itself, ${MIN_CACHED_GOALS} goals cached)`,
    );
  }
  return bytes;
}

/**
 * The cgroup v2 `memory.max` (or v1 `memory.limit_in_bytes`) as read from the files given; null
 * when there is none or it is "max" (v1 reports no limit as a huge number).
 */
export function cgroupMemoryLimit(read: (path: string) => string | null): number | null {
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    const text = read(file)?.trim();
    if (!text || text === 'max') continue;
    const bytes = Number(text);
    if (Number.isFinite(bytes) && bytes > 0 && bytes < 2 ** 60) return bytes;
  }
  return null;
}

/** Sizes the cache: the budget less the worker's base, a goal per HEAP_PER_CACHED_GOAL_MIB, in bounds. */
export function sizeWorkflowCache(facts: MemoryFacts): WorkflowCacheSizing {
  let memoryBytes: number;
  let source: MemorySource;
  if (facts.given) {
    memoryBytes = parseMemorySize(facts.given.value, facts.given.from);
    source = facts.given.from;
  } else if (facts.cgroupBytes) {
    memoryBytes = Math.min(facts.cgroupBytes, facts.totalMemoryBytes);
    source = 'cgroup limit';
  } else {
    memoryBytes = facts.totalMemoryBytes * MACHINE_MEMORY_SHARE;
    source = 'machine share';
  }
  const byBudget = Math.floor((memoryBytes / MIB - WORKER_BASE_MIB) / HEAP_PER_CACHED_GOAL_MIB);
  const byHeap = Math.floor((facts.heapLimitBytes * HEAP_LIMIT_SHARE) / MIB / HEAP_PER_CACHED_GOAL_MIB);
  const byNode =
    facts.asyncContextFrame === false && facts.tracing ? NO_CONTEXT_FRAME_MAX_CACHED_GOALS : MAX_CACHED_GOALS;
  const fit = Math.min(byBudget, byHeap, byNode);
  return {
    maxCachedWorkflows: Math.max(MIN_CACHED_GOALS, Math.min(MAX_CACHED_GOALS, fit)),
    memoryBytes,
    source,
    heapLimited: byHeap < byBudget && byHeap < byNode,
    nodeLimited: byNode < byBudget && byNode <= byHeap,
  };
}

/** One line for the worker's start-up notice and `doctor`. */
export function describeCacheSizing(sizing: WorkflowCacheSizing): string {
  const gib = (sizing.memoryBytes / (1024 * MIB)).toFixed(1);
  const why = sizing.nodeLimited
    ? '; capped on this Node while traces are on: Node 24 keeps more traced goals cheaply'
    : sizing.heapLimited
      ? "; capped by Node's heap limit (raise it with --max-old-space-size)"
      : '';
  return `${sizing.maxCachedWorkflows} goals fit in the workflow cache (${gib} GiB from ${sizing.source}${why})`;
}
