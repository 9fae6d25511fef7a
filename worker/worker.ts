/**
 * A goalrun worker: runs goal workflows and their activities on one task queue. Used by
 * `goalrun worker` on its own and by `goalrun run` inside the CLI process.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, type LogEntry, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createCompactionActivities } from '../activities/compaction-activities';
import type { ProviderEnv } from '../activities/providers/types';
import { createGoalActivities } from '../activities/workflow-activities';
import type { SessionStore } from '../store/types';
import { findWorkflowBundle } from './bundle';

/** Running activities get this long to finish when the worker stops (the SDK default is 0). */
export const SHUTDOWN_GRACE_TIME = '30s';
/** Workflows kept in memory between tasks; bounded because the cache is what runs workers out of memory. */
export const MAX_CACHED_WORKFLOWS = 200;
/** Concurrent activities: model calls are I/O-bound; tools share the host's CPUs. */
export const MAX_CONCURRENT_ACTIVITIES = 20;

/** Options of a goal worker. */
export interface GoalWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  store: SessionStore;
  providerEnv: ProviderEnv;
}

/** Creates (but does not run) a worker for goal workflows and activities. */
export async function createGoalWorker(options: GoalWorkerOptions): Promise<Worker> {
  const bundlePath = findWorkflowBundle();
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(bundlePath
      ? { workflowBundle: { codePath: bundlePath } }
      : { workflowsPath: require.resolve('../workflows') }),
    activities: {
      ...createGoalActivities({ store: options.store, env: options.providerEnv }),
      ...createCompactionActivities({ store: options.store, env: options.providerEnv }),
    },
    shutdownGraceTime: SHUTDOWN_GRACE_TIME,
    maxCachedWorkflows: MAX_CACHED_WORKFLOWS,
    maxConcurrentActivityTaskExecutions: MAX_CONCURRENT_ACTIVITIES,
  });
}

/** Connects a worker to Temporal. */
export async function connectWorker(address: string): Promise<NativeConnection> {
  return NativeConnection.connect({ address });
}

let runtimeInstalled = false;

/**
 * Sends the SDK's logs to a file (for `goalrun run`, whose terminal shows the goal, not the worker)
 * or to stderr at a level (for `goalrun worker`). Must run before the first connection.
 */
export function installWorkerLogging(target: { file: string } | { level: 'INFO' | 'WARN' | 'DEBUG' }): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  if ('file' in target) {
    fs.mkdirSync(path.dirname(target.file), { recursive: true });
    const stream = fs.createWriteStream(target.file, { flags: 'a' });
    const write = (entry: LogEntry) => {
      const meta = entry.meta && Object.keys(entry.meta).length > 0 ? ` ${safeJson(entry.meta)}` : '';
      stream.write(`${new Date().toISOString()} ${entry.level} ${entry.message}${meta}\n`);
    };
    Runtime.install({ logger: new DefaultLogger('INFO', write) });
  } else {
    Runtime.install({ logger: new DefaultLogger(target.level) });
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
