/**
 * A goalrun worker process: runs goal workflows, model steps and tools. `--role all` does everything
 * on one machine (tools on the workflow's own task queue, so Temporal can hand them over eagerly);
 * `--role model` runs workflows and model calls (it holds the provider keys); `--role tools` runs
 * the tools of one host's workspaces (it needs no provider key). Every process that runs tools also
 * polls a queue of its own, where the operations on the background jobs it holds are sent.
 */
import { randomUUID } from 'node:crypto';
import { type NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createCompactionActivities } from '../activities/compaction-activities';
import { createDailyBudgetActivities } from '../activities/daily-budget-activities';
import { createModelStepActivity } from '../activities/model-step-activity';
import { notAToolHostActivities } from '../activities/not-a-tool-host';
import { createNotifyActivities } from '../activities/notify-delivery';
import type { ProviderEnv } from '../activities/providers/types';
import { createRetentionActivities } from '../activities/retention-activities';
import { createScheduleActivities } from '../activities/schedule-activities';
import { createSessionActivities } from '../activities/session-activities';
import { typingStoreOutages } from '../activities/store-outage';
import { createToolActivity } from '../activities/tool-activity';
import { processJobManager } from '../activities/tools/jobs';
import { ConfigError } from '../core/errors';
import { HOST_HEARTBEAT_THROTTLE_MS, HOST_STICKY_TIMEOUT_MS } from '../core/limits';
import type { NotifyTarget } from '../core/notifications';
import type { SessionStore } from '../store/types';
import { findWorkflowBundle, workflowInterceptorsPath, workflowPreloadModules } from './bundle';
import { goalrunDataConverter } from './data-converter';
import { buildIdOf, deploymentOptions } from './deployment';
import { machineCacheSizing } from './machine-memory';
import type { PayloadCodecError } from './payload-codec';
import type { PayloadKey } from './payload-keys';
import type { WorkerRole } from './roles';
import { processTelemetry, silentWorkflowSinks } from './telemetry';
import { connectNative } from './temporal-connect';
import type { TemporalConnectionSettings } from './temporal-connection';
import type { WorkflowCacheSizing } from './workflow-cache';
import { startWorkflowThreadsWithoutStackCapture } from './workflow-threads';

export { toolsQueueName, WORKER_ROLES, type WorkerRole } from './roles';

import { activityMetricsInterceptor, recordWorkflowCacheCapacity } from './metrics';

/** Running tool calls get this long to finish when the worker stops, as the worker says at start. */
export const TOOL_SHUTDOWN_GRACE_MS = 30_000;
/** The grace as printed (`goalrun worker`, `run` on its way out). */
export const SHUTDOWN_GRACE_TIME = `${TOOL_SHUTDOWN_GRACE_MS / 1000}s`;
/**
 * Beyond the tools' grace, the SDK waits this much longer before it cancels what still runs (its
 * default is 0), so a command killed at the end of the grace reports why before the SDK cuts in.
 */
const SDK_SHUTDOWN_MARGIN_MS = 5_000;
/** Concurrent activities: model calls are I/O-bound; tools share the host's CPUs. */
export const MAX_CONCURRENT_ACTIVITIES = 20;

/**
 * The worker's throughput and latency settings (issue 10, measured with scripts/bench-*.js; the
 * benchmarks' floor workers use the same). Spread into every goal worker.
 */
export const WORKER_TUNING = {
  shutdownGraceTime: TOOL_SHUTDOWN_GRACE_MS + SDK_SHUTDOWN_MARGIN_MS,
  maxConcurrentActivityTaskExecutions: MAX_CONCURRENT_ACTIVITIES,
} satisfies Partial<WorkerOptions>;

/**
 * WORKER_TUNING with the workflow cache sized to the memory the worker may use (worker/workflow-cache.ts):
 * the cache holds every live goal it can, because a goal that falls out is replayed from its start.
 */
export function workerTuning(cache: WorkflowCacheSizing = machineCacheSizing()) {
  return { ...WORKER_TUNING, maxCachedWorkflows: cache.maxCachedWorkflows } satisfies Partial<WorkerOptions>;
}

/** Options of a goal worker process. */
export interface GoalWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  /** The queue of goal workflows (and, with role all, of their model calls and tools). */
  taskQueue: string;
  store: SessionStore;
  providerEnv: ProviderEnv;
  /** Where notifications go (config `notify`): read here, so their URLs and secrets never travel in Temporal. */
  notify?: readonly NotifyTarget[];
  /** Secret values to redact from tool output (provider keys, database passwords). */
  secrets?: string[];
  role?: WorkerRole;
  /** The tools queue a `tools` worker polls (see toolsQueueName); ignored by other roles. */
  toolsQueue?: string;
  /** A `tools` worker's workspace root (a real path): it runs tools only for workspaces inside it. */
  workspaceRoot?: string;
  /**
   * The queue of a foreground `run`/`resume` (role all): its goal's model calls and tools come there
   * (goal.hostQueue), and on the shared queue this process runs workflow tasks only, never another
   * goal's model calls or tools.
   */
  hostQueue?: string;
  /** The workflow cache's size and why (default: sized from this machine, machineCacheSizing). */
  cache?: WorkflowCacheSizing;
  /** Payload keys (worker/payload-keys.ts): the first encrypts, all decrypt; none: payloads stay plain. */
  payloadKeys?: PayloadKey[];
  /** GenAI spans may carry message text and tool arguments and output (`--trace-content`). */
  traceContent?: boolean;
  /**
   * Register the workflow worker as a version of the `goalrun` Worker Deployment (worker/deployment.ts),
   * its build id made from the workflow bundle; off: an unversioned worker, as every release so far.
   */
  versioning?: boolean;
}

/** The workers of one process, run and stopped together. */
export class GoalWorker {
  /** Set when a payload could not be decrypted: the workers stop, and run() rejects with it. */
  private decryptError?: PayloadCodecError;

  constructor(
    private readonly workers: Worker[],
    /** The queue where operations on this process's background jobs are sent. */
    readonly processQueue: string | null,
    /** The Worker Deployment build id this process registered, when it runs versioned. */
    readonly buildId?: string,
  ) {}

  /** Runs every worker until shutdown; kills running tools and jobs first on the way down. */
  async run(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.run()));
    if (this.decryptError) throw stoppedOnDecryptError(this.decryptError);
  }

  /**
   * A payload this worker cannot decrypt: every task of that goal would fail here the same way, over
   * and over, so the worker stops and says why; the goal waits for a worker that has the key.
   */
  stopOnDecryptError(error: PayloadCodecError): void {
    if (this.decryptError) return;
    this.decryptError = error;
    // Not from inside the codec call that failed: its task first completes as failed.
    setImmediate(() => this.shutdown({ killTools: true }));
  }

  /**
   * Stops polling. With `killTools` (a `goalrun worker` told to stop), background jobs are killed,
   * new tool calls are refused with "goalrun worker is shutting down; command not started", running
   * commands get TOOL_SHUTDOWN_GRACE_MS to finish (their result is recorded as usual) and are killed
   * after it; Temporal retries what was killed on another worker. Without it (`run` stops following),
   * running calls get the grace time to finish.
   */
  shutdown(options: { killTools?: boolean } = {}): void {
    if (options.killTools && this.processQueue) void processJobManager().shutdown(TOOL_SHUTDOWN_GRACE_MS);
    for (const worker of this.workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  }

  /** RUNNING while any worker runs. */
  getState(): string {
    return this.workers.some((worker) => worker.getState() === 'RUNNING')
      ? 'RUNNING'
      : this.workers[0].getState();
  }

  /** Activities in flight over all workers. */
  getStatus(): { numInFlightActivities: number } {
    return {
      numInFlightActivities: this.workers.reduce(
        (sum, worker) => sum + worker.getStatus().numInFlightActivities,
        0,
      ),
    };
  }
}

/** Creates (but does not run) the workers of a goalrun process for its role. */
export async function createGoalWorker(options: GoalWorkerOptions): Promise<GoalWorker> {
  const role = options.role ?? 'all';
  const { store } = options;
  const payloadKeys = options.payloadKeys ?? [];
  // The GoalWorker exists only after its workers: the codec reaches it through this.
  let goalWorker: GoalWorker | undefined;
  const telemetry = processTelemetry({ traceContent: options.traceContent });
  const cache = options.cache ?? machineCacheSizing();
  if (role !== 'tools') recordWorkflowCacheCapacity(cache.maxCachedWorkflows);
  const common: Partial<WorkerOptions> = {
    connection: options.connection,
    namespace: options.namespace,
    dataConverter: goalrunDataConverter(payloadKeys, (error) => goalWorker?.stopOnDecryptError(error)),
    ...workerTuning(cache),
    // goalrun's Prometheus counters, read off each activity's input and result (worker/metrics.ts),
    // and with an OTLP endpoint, the activities' spans (worker/telemetry.ts).
    interceptors: { activity: [activityMetricsInterceptor, ...(telemetry?.activityInterceptors ?? [])] },
    // The workflow's spans leave through this sink; silent without an endpoint.
    sinks: telemetry?.sinks ?? silentWorkflowSinks(),
  };
  const runsTools = role !== 'model';
  const processQueue = runsTools
    ? `${role === 'tools' ? options.toolsQueue : options.taskQueue}#${randomUUID().slice(0, 8)}`
    : null;
  const tools = runsTools
    ? createToolActivity({
        store,
        secrets: options.secrets,
        processQueue: processQueue ?? undefined,
        workspaceRoot: role === 'tools' ? options.workspaceRoot : undefined,
      })
    : undefined;
  const workers: Worker[] = [];
  let buildId: string | undefined;
  if (role !== 'tools') {
    const bundlePath = findWorkflowBundle(payloadKeys.length > 0);
    if (options.versioning) {
      if (!bundlePath)
        throw new ConfigError('worker versioning needs the prebuilt workflow bundle: run npm run build');
      buildId = buildIdOf(bundlePath);
    }
    // The SDK's per-promise stack capture costs a third of the workflow thread's CPU (workflow-threads.ts).
    startWorkflowThreadsWithoutStackCapture();
    const activities = {
      // The workflow's store calls: an outage is typed, so the workflow waits it out (store-wait.ts).
      ...typingStoreOutages(createSessionActivities(store, options.providerEnv)),
      ...typingStoreOutages(createDailyBudgetActivities(store)),
      // Its store reads before the provider call: an outage is typed too, so the workflow takes the step again.
      ...typingStoreOutages(createModelStepActivity({ store, env: options.providerEnv })),
      ...createCompactionActivities({ store, env: options.providerEnv }),
      // The daily clean of a configured retention (issue 17), started by its Temporal Schedule.
      ...createRetentionActivities(store),
      // Local activities of the notification workflow: they run in the process that runs it.
      ...createNotifyActivities(options.notify ?? []),
      // The session row of a scheduled goal's firing (issue 28 §3), made before its goal starts.
      ...typingStoreOutages(createScheduleActivities(store)),
      // With role all, tools run on the workflow's own queue, where Temporal can dispatch them eagerly;
      // with role model, a goal that asks this process to gather hears that it runs no tools.
      ...(tools ?? notAToolHostActivities()),
    };
    workers.push(
      await Worker.create({
        ...common,
        taskQueue: options.taskQueue,
        ...(bundlePath
          ? { workflowBundle: { codePath: bundlePath } }
          : {
              workflowsPath: require.resolve('../workflows'),
              interceptors: { ...common.interceptors, workflowModules: [workflowInterceptorsPath()] },
              bundlerOptions: { preloadModules: workflowPreloadModules() },
            }),
        activities,
        ...(buildId ? { workerDeploymentOptions: deploymentOptions(buildId) } : {}),
        // A foreground process takes no other goal's calls from the shared queue (local ones still run),
        // and a task bound for its sticky queue moves on soon when the process is gone (fast takeover).
        ...(options.hostQueue
          ? { enableNonLocalActivities: false, stickyQueueScheduleToStartTimeout: HOST_STICKY_TIMEOUT_MS }
          : {}),
      }),
    );
    if (options.hostQueue) {
      workers.push(
        await Worker.create({
          ...common,
          taskQueue: options.hostQueue,
          activities,
          // Heartbeats reach Temporal often enough for the host's short heartbeat timeout (host-placement.ts).
          maxHeartbeatThrottleInterval: HOST_HEARTBEAT_THROTTLE_MS,
        }),
      );
    }
  }
  if (role === 'tools') {
    if (!options.toolsQueue) throw new Error('a tools worker needs the tools queue it serves');
    if (!options.workspaceRoot) throw new Error('a tools worker needs the workspace root it serves');
    workers.push(await Worker.create({ ...common, taskQueue: options.toolsQueue, activities: { ...tools } }));
  }
  if (tools && processQueue) {
    // Job reads and kills must reach the process that holds the job, whichever worker started it.
    workers.push(await Worker.create({ ...common, taskQueue: processQueue, activities: { ...tools } }));
  }
  goalWorker = new GoalWorker(workers, processQueue, buildId);
  return goalWorker;
}

/** What a worker that met a payload it cannot decrypt stops with: one line, exit code 2. */
function stoppedOnDecryptError(error: PayloadCodecError): ConfigError {
  return new ConfigError(
    `worker stopped: ${error.message}. Give this worker the key, or run the goal on a worker that has it; the goal waits meanwhile.`,
  );
}

/**
 * Connects a worker to Temporal with the process's connection settings (TLS, API key, profile:
 * worker/temporal-connection.ts); a refused certificate or key is named with the setting to fix.
 */
export async function connectWorker(settings: TemporalConnectionSettings): Promise<NativeConnection> {
  return connectNative(settings);
}

/** Logging moved to worker/logging.ts; re-exported so existing imports keep working. */
export { installWorkerLogging } from './logging';
