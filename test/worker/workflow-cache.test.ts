import { describe, expect, it } from 'vitest';
import { hasAsyncContextFrame } from '../../worker/machine-memory';
import {
  cgroupMemoryLimit,
  describeCacheSizing,
  HEAP_PER_CACHED_GOAL_MIB,
  MAX_CACHED_GOALS,
  MemorySizeError,
  MIN_CACHED_GOALS,
  NO_CONTEXT_FRAME_MAX_CACHED_GOALS,
  parseMemorySize,
  sizeWorkflowCache,
  WORKER_BASE_MIB,
} from '../../worker/workflow-cache';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const BIG_HEAP = 64 * GIB;

describe('parseMemorySize', () => {
  it('reads G, M, GiB and bare MiB', () => {
    expect(parseMemorySize('2G')).toBe(2 * GIB);
    expect(parseMemorySize('2GiB')).toBe(2 * GIB);
    expect(parseMemorySize('1536M')).toBe(1536 * MIB);
    expect(parseMemorySize('1536')).toBe(1536 * MIB);
    expect(parseMemorySize('1.5g')).toBe(1.5 * GIB);
  });

  it('names a value that is no size, and one too small for a worker', () => {
    expect(() => parseMemorySize('lots')).toThrow(MemorySizeError);
    expect(() => parseMemorySize('2T')).toThrow('--max-memory "2T" is not a size');
    expect(() => parseMemorySize('100M', 'GOALRUN_WORKER_MAX_MEMORY')).toThrow(
      /GOALRUN_WORKER_MAX_MEMORY 100M is too small: a worker needs at least \d+M/,
    );
  });
});

describe('cgroupMemoryLimit', () => {
  it('reads v2, then v1, and ignores "max" and v1 unlimited', () => {
    const files = (map: Record<string, string>) => (file: string) => map[file] ?? null;
    expect(cgroupMemoryLimit(files({ '/sys/fs/cgroup/memory.max': '2147483648\n' }))).toBe(2 * GIB);
    expect(cgroupMemoryLimit(files({ '/sys/fs/cgroup/memory.max': 'max\n' }))).toBeNull();
    expect(cgroupMemoryLimit(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': String(GIB) }))).toBe(
      GIB,
    );
    expect(
      cgroupMemoryLimit(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712' })),
    ).toBeNull();
    expect(cgroupMemoryLimit(() => null)).toBeNull();
  });
});

describe('sizeWorkflowCache', () => {
  const perGoal = HEAP_PER_CACHED_GOAL_MIB;
  it('fits the budget less the base, a goal per measured MiB', () => {
    const sizing = sizeWorkflowCache({
      given: { value: '2G', from: '--max-memory' },
      totalMemoryBytes: 24 * GIB,
      heapLimitBytes: BIG_HEAP,
    });
    expect(sizing.maxCachedWorkflows).toBe(Math.floor((2048 - WORKER_BASE_MIB) / perGoal));
    expect(sizing.source).toBe('--max-memory');
    expect(describeCacheSizing(sizing)).toMatch(
      /^\d+ goals fit in the workflow cache \(2\.0 GiB from --max-memory\)$/,
    );
  });

  it('takes the cgroup limit over the machine, and half the machine without one', () => {
    const cgroup = sizeWorkflowCache({
      cgroupBytes: GIB,
      totalMemoryBytes: 24 * GIB,
      heapLimitBytes: BIG_HEAP,
    });
    expect(cgroup.source).toBe('cgroup limit');
    expect(cgroup.memoryBytes).toBe(GIB);
    const machine = sizeWorkflowCache({
      cgroupBytes: null,
      totalMemoryBytes: 4 * GIB,
      heapLimitBytes: BIG_HEAP,
    });
    expect(machine.source).toBe('machine share');
    expect(machine.maxCachedWorkflows).toBe(Math.floor((2048 - WORKER_BASE_MIB) / perGoal));
  });

  it("stays inside V8's heap limit and says so, and within its bounds", () => {
    const heap = sizeWorkflowCache({ totalMemoryBytes: 64 * GIB, heapLimitBytes: 1 * GIB });
    expect(heap.heapLimited).toBe(true);
    expect(heap.maxCachedWorkflows).toBeLessThan(1024 / perGoal);
    expect(describeCacheSizing(heap)).toContain("capped by Node's heap limit");
    const tiny = sizeWorkflowCache({
      cgroupBytes: 300 * MIB,
      totalMemoryBytes: GIB,
      heapLimitBytes: BIG_HEAP,
    });
    expect(tiny.maxCachedWorkflows).toBe(MIN_CACHED_GOALS);
    const huge = sizeWorkflowCache({ totalMemoryBytes: 1024 * GIB, heapLimitBytes: 1024 * GIB });
    expect(huge.maxCachedWorkflows).toBe(MAX_CACHED_GOALS);
  });
});

describe('the cache on a Node without AsyncContextFrame', () => {
  it('stops at the measured cap when the worker traces, and says why', () => {
    const sizing = sizeWorkflowCache({
      totalMemoryBytes: 24 * GIB,
      heapLimitBytes: 4 * GIB,
      asyncContextFrame: false,
      tracing: true,
    });
    expect(sizing.maxCachedWorkflows).toBe(NO_CONTEXT_FRAME_MAX_CACHED_GOALS);
    expect(sizing.nodeLimited).toBe(true);
    expect(describeCacheSizing(sizing)).toContain(
      'capped on this Node while traces are on: Node 24 keeps more traced goals cheaply',
    );
    // Untraced goals hold no AsyncLocalStorage: the cache is sized to memory as on Node 24.
    const untraced = sizeWorkflowCache({
      totalMemoryBytes: 24 * GIB,
      heapLimitBytes: 4 * GIB,
      asyncContextFrame: false,
    });
    expect(untraced.maxCachedWorkflows).toBeGreaterThan(NO_CONTEXT_FRAME_MAX_CACHED_GOALS);
    expect(untraced.nodeLimited).toBe(false);
    const frame = sizeWorkflowCache({
      totalMemoryBytes: 24 * GIB,
      heapLimitBytes: 4 * GIB,
      asyncContextFrame: true,
      tracing: true,
    });
    expect(frame.maxCachedWorkflows).toBeGreaterThan(NO_CONTEXT_FRAME_MAX_CACHED_GOALS);
    expect(frame.nodeLimited).toBe(false);
  });

  it('knows which Node has it', () => {
    expect(hasAsyncContextFrame('24.1.0', [])).toBe(true);
    expect(hasAsyncContextFrame('24.1.0', ['--no-async-context-frame'])).toBe(false);
    expect(hasAsyncContextFrame('22.12.0', [])).toBe(false);
    expect(hasAsyncContextFrame('22.12.0', ['--experimental-async-context-frame'])).toBe(true);
    expect(hasAsyncContextFrame('20.20.2', ['--experimental-async-context-frame'])).toBe(false);
  });
});
