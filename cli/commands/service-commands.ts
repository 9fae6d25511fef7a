/** `worker` and `dev`: the long-running processes. */

import path from 'node:path';
import { installWorkerLogging, WORKER_LOG_LEVELS, type WorkerLogLevel } from '../../worker/logging';
import {
  connectWorker,
  createGoalWorker,
  SHUTDOWN_GRACE_TIME,
  toolsQueueName,
  type WorkerRole,
} from '../../worker/worker';
import type { CliContext } from '../context';
import { runDevServerForeground } from '../dev-server';
import { notice, say } from '../output';

/** `goalrun worker`: runs goals and their tools until SIGINT/SIGTERM, then shuts down gracefully. */
export async function workerCommand(
  context: CliContext,
  options: { logLevel?: string; role?: string; workspaceRoot?: string },
): Promise<number> {
  const level = (WORKER_LOG_LEVELS as readonly string[]).includes(options.logLevel ?? '')
    ? (options.logLevel as WorkerLogLevel)
    : 'info';
  installWorkerLogging({ level });
  const { settings } = context;
  const role = (options.role ?? 'all') as WorkerRole;
  await context.temporal();
  const store = await context.sessionStore();
  const taskQueue = await context.taskQueue();
  const toolsQueue =
    role === 'tools' ? toolsQueueName(path.resolve(options.workspaceRoot ?? process.cwd())) : undefined;
  const worker = await createGoalWorker({
    connection: await connectWorker(settings.temporalAddress),
    namespace: settings.namespace,
    taskQueue,
    store,
    // A tools worker never calls a model: it needs (and gets) no provider key.
    providerEnv: role === 'tools' ? {} : settings.providerEnv,
    secrets: context.knownSecrets(),
    role,
    toolsQueue,
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
