/** `worker` and `dev`: the long-running processes. */
import { Runtime } from '@temporalio/worker';
import { connectWorker, createGoalWorker, installWorkerLogging } from '../../worker/worker';
import type { CliContext } from '../context';
import { runDevServerForeground } from '../dev-server';
import { say } from '../output';

/** `goalrun worker`: runs goals and their tools until SIGINT/SIGTERM, then shuts down gracefully. */
export async function workerCommand(context: CliContext, options: { logLevel?: string }): Promise<number> {
  const level = (options.logLevel ?? 'INFO').toUpperCase();
  installWorkerLogging({ level: level === 'DEBUG' || level === 'WARN' ? level : 'INFO' });
  const { settings } = context;
  await context.temporal();
  const store = await context.sessionStore();
  const worker = await createGoalWorker({
    connection: await connectWorker(settings.temporalAddress),
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    store,
    providerEnv: settings.providerEnv,
  });
  const log = Runtime.instance().logger;
  log.info(
    `goalrun worker: task queue "${settings.taskQueue}", namespace "${settings.namespace}", Temporal ${settings.temporalAddress}, store ${context.describeStore()}`,
  );
  log.info(
    'press Ctrl-C to stop; running tools get 30 s to finish before they are cancelled and retried elsewhere',
  );
  await worker.run();
  log.info('goalrun worker stopped');
  return 0;
}

/** `goalrun dev`: a local Temporal dev server in the foreground, state kept in the data directory. */
export async function devCommand(context: CliContext): Promise<number> {
  say(
    `starting the Temporal dev server at ${context.settings.temporalAddress} (state in ${context.settings.home})`,
  );
  return runDevServerForeground({ home: context.settings.home, address: context.settings.temporalAddress });
}
