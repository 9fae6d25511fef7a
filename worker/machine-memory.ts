/** Reads what the workflow cache is sized from off this process and machine (worker/workflow-cache.ts). */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import v8 from 'node:v8';
import { tracingRequested } from './tracing-env';
import {
  cgroupMemoryLimit,
  type MemoryFacts,
  sizeWorkflowCache,
  type WorkflowCacheSizing,
} from './workflow-cache';

/** The environment variable that gives a worker its memory budget, as `--max-memory` does. */
export const MAX_MEMORY_ENV = 'GOALRUN_WORKER_MAX_MEMORY';

/** This machine's facts; `--max-memory` wins over GOALRUN_WORKER_MAX_MEMORY. */
export function machineMemoryFacts(maxMemory?: string): MemoryFacts {
  const fromEnv = process.env[MAX_MEMORY_ENV]?.trim();
  return {
    given: maxMemory
      ? { value: maxMemory, from: '--max-memory' }
      : fromEnv
        ? { value: fromEnv, from: MAX_MEMORY_ENV }
        : undefined,
    cgroupBytes: cgroupMemoryLimit((file) => {
      try {
        return readFileSync(file, 'utf8');
      } catch {
        return null;
      }
    }),
    totalMemoryBytes: os.totalmem(),
    heapLimitBytes: v8.getHeapStatistics().heap_size_limit,
    asyncContextFrame: hasAsyncContextFrame(),
    tracing: tracingRequested(),
  };
}

/** Node 24 runs AsyncLocalStorage on AsyncContextFrame unless told not to; Node 22 only when told to. */
export function hasAsyncContextFrame(
  version = process.versions.node,
  flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)],
): boolean {
  const major = Number(version.split('.')[0]);
  if (flags.includes('--no-async-context-frame')) return false;
  if (major >= 24) return true;
  return major >= 22 && flags.includes('--experimental-async-context-frame');
}

/** The cache size of a worker of this process. */
export function machineCacheSizing(maxMemory?: string): WorkflowCacheSizing {
  return sizeWorkflowCache(machineMemoryFacts(maxMemory));
}
