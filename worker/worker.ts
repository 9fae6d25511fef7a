/**
 * A goalrun worker: runs goal workflows and their activities on one task queue. Used by
 * `goalrun worker` on its own and by `goalrun run` inside the CLI process.
 */
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createCompactionActivities } from '../activities/compaction-activities';
import type { ProviderEnv } from '../activities/providers/types';
import { createGoalActivities } from '../activities/workflow-activities';
import type { SessionStore } from '../store/types';
import { findWorkflowBundle } from './bundle';
import { activityMetricsInterceptor } from './metrics';

/** Running activities get this long to finish when the worker stops (the SDK default is 0). */
export const SHUTDOWN_GRACE_TIME = '30s';
/** Workflows kept in memory between tasks; bounded because the cache is what runs workers out of memory. */
export const MAX_CACHED_WORKFLOWS = 200;
/** Concurrent activities: model calls are I/O-bound; tools share the host's CPUs. */
export const MAX_CONCURRENT_ACTIVITIES = 20;

/**
 * The worker's throughput and latency settings (issue 10, measured with scripts/bench-*.js; the
 * benchmarks' floor workers use the same). Spread into every goal worker.
 */
export const WORKER_TUNING = {
  shutdownGraceTime: SHUTDOWN_GRACE_TIME,
  maxCachedWorkflows: MAX_CACHED_WORKFLOWS,
  maxConcurrentActivityTaskExecutions: MAX_CONCURRENT_ACTIVITIES,
} satisfies Partial<WorkerOptions>;

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
    ...WORKER_TUNING,
    // goalrun's Prometheus counters, read off each activity's input and result (worker/metrics.ts).
    interceptors: { activity: [activityMetricsInterceptor] },
  });
}

/** Connects a worker to Temporal. */
export async function connectWorker(address: string): Promise<NativeConnection> {
  return NativeConnection.connect({ address });
}

/** Logging moved to worker/logging.ts; re-exported so existing imports keep working. */
export { installWorkerLogging } from './logging';
