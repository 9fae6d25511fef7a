/**
 * `goalrun deploy`: the Worker Deployment of versioned workers (worker/deployment.ts). `set-current`
 * makes a build the one new goals start on and continued-as-new goals move to; `show` lists the
 * builds Temporal knows and which one is current.
 */
import type { Client } from '@temporalio/client';
import { ConfigError } from '../../core/errors';
import { findWorkflowBundle } from '../../worker/bundle';
import { buildIdOf, DEPLOYMENT_NAME } from '../../worker/deployment';
import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { say } from '../output';

/** How long set-current waits for a build's workers to reach Temporal (a worker just started). */
const SET_CURRENT_TIMEOUT_MS = 60_000;
const SET_CURRENT_RETRY_MS = 1_000;
const IDENTITY = 'goalrun deploy';

/** The build id of this installation's workflow bundle (the one `goalrun worker --versioning` registers). */
export function localBuildId(encrypted: boolean): string {
  const bundle = findWorkflowBundle(encrypted);
  if (!bundle)
    throw new ConfigError('no prebuilt workflow bundle here: run npm run build, or give --build-id');
  return buildIdOf(bundle);
}

/**
 * Makes a build current, retrying while Temporal does not know it yet (its workers have not polled):
 * the answer that a build is unknown comes as FailedPrecondition or NotFound until they do.
 */
export async function setCurrentBuild(client: Client, namespace: string, buildId: string): Promise<void> {
  const deadline = Date.now() + SET_CURRENT_TIMEOUT_MS;
  for (;;) {
    try {
      await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace,
        deploymentName: DEPLOYMENT_NAME,
        buildId,
        identity: IDENTITY,
      });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, SET_CURRENT_RETRY_MS));
    }
  }
}

/** The deployment's builds and which one is current, as Temporal describes them. */
export async function describeDeployment(
  client: Client,
  namespace: string,
): Promise<{ current?: string; builds: string[] }> {
  const described = await client.workflowService.describeWorkerDeployment({
    namespace,
    deploymentName: DEPLOYMENT_NAME,
  });
  const info = described.workerDeploymentInfo;
  return {
    current: info?.routingConfig?.currentDeploymentVersion?.buildId ?? undefined,
    builds: (info?.versionSummaries ?? [])
      .map((summary) => summary.deploymentVersion?.buildId)
      .filter((id): id is string => Boolean(id)),
  };
}

/** `goalrun deploy set-current [--build-id ID]`. */
export async function setCurrentCommand(context: CliContext, options: { buildId?: string }): Promise<number> {
  const buildId = options.buildId ?? localBuildId(context.payloadKeys().length > 0);
  const client = await context.temporal();
  await setCurrentBuild(client, context.settings.namespace, buildId);
  say(
    `build ${buildId} of deployment ${DEPLOYMENT_NAME} is current: new goals start on it, running goals move to it at their next continue-as-new`,
  );
  return ExitCode.completed;
}

/** `goalrun deploy show [--json]`. */
export async function showCommand(context: CliContext, options: { json?: boolean }): Promise<number> {
  const client = await context.temporal();
  const described = await describeDeployment(client, context.settings.namespace);
  if (options.json) {
    say(JSON.stringify({ deployment: DEPLOYMENT_NAME, ...described }));
    return ExitCode.completed;
  }
  say(
    `deployment ${DEPLOYMENT_NAME}: current build ${described.current ?? '(none: unversioned workers take new goals)'}`,
  );
  for (const build of described.builds) say(`  ${build}${build === described.current ? '  (current)' : ''}`);
  return ExitCode.completed;
}
