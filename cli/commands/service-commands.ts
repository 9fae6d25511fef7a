/** `worker` and `dev`: the long-running processes. */
import { installWorkerLogging, WORKER_LOG_LEVELS, type WorkerLogLevel } from '../../worker/logging';
import type { CliContext } from '../context';
import { runDevServerForeground } from '../dev-server';
import { notice, say } from '../output';

/** `goalrun worker`: runs goals and their tools until SIGINT/SIGTERM, then shuts down gracefully. */
export async function workerCommand(context: CliContext, options: { logLevel?: string }): Promise<number> {
  const level = (WORKER_LOG_LEVELS as readonly string[]).includes(options.logLevel ?? '')
    ? (options.logLevel as WorkerLogLevel)
    : 'info';
  installWorkerLogging({ level });
  // Loaded here so that `goalrun dev` does not load the worker.
  const { connectWorker, createGoalWorker, SHUTDOWN_GRACE_TIME } =
    require('../../worker/worker') as typeof import('../../worker/worker');
  const { settings } = context;
  await context.temporal();
  const store = await context.sessionStore();
  const taskQueue = await context.taskQueue();
  const worker = await createGoalWorker({
    connection: await connectWorker(settings.temporalAddress),
    namespace: settings.namespace,
    taskQueue,
    store,
    providerEnv: settings.providerEnv,
  });
  // Said on stderr before any log line, so a person (or a test) sees at once which goals it serves.
  notice(
    `worker polling task queue ${taskQueue} (${settings.taskQueueOverride ? 'as configured' : 'derived from the store'}); ` +
      `namespace ${settings.namespace}, Temporal ${settings.temporalAddress}, store ${context.describeStore()}`,
  );
  notice(
    `press Ctrl-C to stop; running tools get ${SHUTDOWN_GRACE_TIME} to finish before they go back to Temporal`,
  );
  await worker.run();
  notice('worker stopped');
  return 0;
}

/** `goalrun dev`: a local Temporal dev server in the foreground, state kept in the data directory. */
export async function devCommand(context: CliContext): Promise<number> {
  say(
    `starting the Temporal dev server at ${context.settings.temporalAddress} (state in ${context.settings.home})`,
  );
  return runDevServerForeground({ home: context.settings.home, address: context.settings.temporalAddress });
}
