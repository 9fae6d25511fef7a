/** `worker` and `dev`: the long-running processes. */

import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../../core/errors';
import { DEFAULT_SANDBOX, type SandboxMode } from '../../core/sandbox-settings';
import { securityText } from '../../worker/connection-options';
import { installWorkerLogging, WORKER_LOG_LEVELS, type WorkerLogLevel } from '../../worker/logging';
import { machineCacheSizing } from '../../worker/machine-memory';
import { toolsQueueName, type WorkerRole } from '../../worker/roles';
import { describeCacheSizing } from '../../worker/workflow-cache';
import type { CliContext } from '../context';
import { runDevServerForeground } from '../dev-server';
import { notice, say } from '../output';
import { requireSandbox } from '../sandbox-check';

/** `goalrun worker`: runs goals and their tools until SIGINT/SIGTERM, then shuts down gracefully. */
export async function workerCommand(
  context: CliContext,
  options: {
    logLevel?: string;
    metricsPort?: string;
    role?: string;
    workspaceRoot?: string;
    sandbox?: SandboxMode;
    versioning?: boolean;
    setCurrent?: boolean;
    maxMemory?: string;
  },
): Promise<number> {
  const role = (options.role ?? 'all') as WorkerRole;
  // Checked first: a size that is not one is a usage error, before any server is started.
  // A --max-memory (or GOALRUN_WORKER_MAX_MEMORY) that is no size is a MemorySizeError: exit 2.
  const cache = role === 'tools' ? undefined : machineCacheSizing(options.maxMemory);
  // Checked before anything starts: a tools worker without a real root would refuse every call.
  const workspaceRoot = role === 'tools' ? realWorkspaceRoot(options.workspaceRoot) : undefined;
  // A worker that runs tools on a machine that cannot sandbox would fail every command of every goal.
  if (role !== 'model') {
    await requireSandbox(options.sandbox ?? context.settings.config.sandbox?.mode ?? DEFAULT_SANDBOX.mode);
  }
  const level = (WORKER_LOG_LEVELS as readonly string[]).includes(options.logLevel ?? '')
    ? (options.logLevel as WorkerLogLevel)
    : 'info';
  // Before the runtime is installed: the SDK's exporter gets the private port the endpoint reads.
  const metrics = options.metricsPort ? await startMetrics(options.metricsPort) : undefined;
  installWorkerLogging({ level }, { prometheusBindAddress: metrics?.sdkBindAddress });
  // Loaded here so that `goalrun dev` does not load the worker.
  const { connectWorker, createGoalWorker, SHUTDOWN_GRACE_TIME } =
    require('../../worker/worker') as typeof import('../../worker/worker');
  const { settings } = context;
  await context.temporal();
  const store = await context.sessionStore();
  const taskQueue = await context.taskQueue();
  const toolsQueue =
    role === 'tools' ? toolsQueueName(path.resolve(options.workspaceRoot ?? process.cwd())) : undefined;
  const { versioningFromEnv } =
    require('../../worker/deployment') as typeof import('../../worker/deployment');
  // A tool host runs no workflow: it has no build to register and serves every build's goals.
  const versioning = role !== 'tools' && (options.versioning === true || versioningFromEnv());
  if (options.setCurrent && !versioning) {
    throw new ConfigError(
      '--set-current needs --versioning (or GOALRUN_WORKER_VERSIONING=1) and a role that runs goals',
    );
  }
  const worker = await createGoalWorker({
    connection: await connectWorker(settings.temporal),
    namespace: settings.namespace,
    taskQueue,
    store,
    // A tools worker never calls a model: it needs (and gets) no provider key.
    providerEnv: role === 'tools' ? {} : settings.providerEnv,
    secrets: context.knownSecrets(),
    role,
    toolsQueue,
    workspaceRoot,
    payloadKeys: context.payloadKeys(),
    versioning,
    notify: settings.config.notify,
    cache,
  });
  // SIGTERM / Ctrl-C: kill running tools and jobs, refuse new tool calls, let Temporal retry them elsewhere.
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.once(signal, () => worker.shutdown({ killTools: true }));
  // Said on stderr before any log line, so a person (or a test) sees at once which goals it serves.
  if (toolsQueue) {
    notice(
      `tools worker polling ${toolsQueue}: start goals whose workspace is under ${options.workspaceRoot ?? process.cwd()} with --tools-queue '${toolsQueue}'`,
    );
  }
  notice(
    `${role === 'all' ? 'worker' : `${role} worker`} polling task queue ${role === 'tools' ? toolsQueue : taskQueue} (${settings.taskQueueOverride ? 'as configured' : 'derived from the store'}); ` +
      `namespace ${settings.namespace}, Temporal ${settings.temporalAddress} (${securityText(settings.temporal)}), store ${context.describeStore()}`,
  );
  if (cache) notice(describeCacheSizing(cache));
  if (metrics) notice(`metrics on ${metrics.url}`);
  // The workers that run workflows keep the retention schedule in step with their config (issue 17).
  if (role !== 'tools') {
    const { syncRetentionSchedule } =
      require('../retention-schedule') as typeof import('../retention-schedule');
    // A server that refuses the schedule does not stop the worker from running goals: it says so.
    const done = await syncRetentionSchedule(context).catch(
      (err: Error) => `retention schedule not synced with the config: ${err.message}`,
    );
    if (done) notice(done);
  }
  if (worker.buildId) notice(`registered as build ${worker.buildId} of Worker Deployment goalrun`);
  notice(
    `press Ctrl-C to stop; running tools get ${SHUTDOWN_GRACE_TIME} to finish before they go back to Temporal`,
  );
  const running = worker.run();
  if (options.setCurrent && worker.buildId) {
    // The build exists in Temporal once this worker has polled: set-current retries until then.
    const { setCurrentBuild } = require('./deploy-commands') as typeof import('./deploy-commands');
    try {
      await setCurrentBuild(await context.temporal(), settings.namespace, worker.buildId);
    } catch (err) {
      worker.shutdown({ killTools: true });
      await running;
      throw err;
    }
    notice(`build ${worker.buildId} is now current: new goals start on it`);
  }
  await running;
  await metrics?.close();
  notice('worker stopped');
  return 0;
}

/**
 * The real path of a tools worker's workspace root: the boundary its tool calls are checked against
 * (the queue keeps the name as given, so goals started with a printed queue still find it).
 */
function realWorkspaceRoot(given: string | undefined): string {
  const dir = path.resolve(given ?? process.cwd());
  try {
    const real = realpathSync(dir);
    if (statSync(real).isDirectory()) return real;
  } catch {
    // reported below
  }
  throw new ConfigError(
    `--workspace-root ${dir} is not a directory: give the directory whose workspaces this tool host serves`,
  );
}

/** Starts the worker's metrics endpoint (loaded only when asked for). */
async function startMetrics(value: string) {
  const { parseMetricsAddress, startMetricsEndpoint } =
    require('../../worker/metrics-endpoint') as typeof import('../../worker/metrics-endpoint');
  let address: { host: string; port: number };
  try {
    address = parseMetricsAddress(value);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  return startMetricsEndpoint(address);
}

/** `goalrun dev`: a local Temporal dev server in the foreground, state kept in the data directory. */
export async function devCommand(context: CliContext): Promise<number> {
  say(
    `starting the Temporal dev server at ${context.settings.temporalAddress} (state in ${context.settings.home})`,
  );
  return runDevServerForeground({ home: context.settings.home, address: context.settings.temporalAddress });
}
