/**
 * Worker Deployments (Temporal's worker versioning): which build of the workflow code a worker runs,
 * and how goals move between builds. Opt-in (`goalrun worker --versioning`, or GOALRUN_WORKER_VERSIONING=1):
 * a versioned worker takes no task until its build is made current, and once a task queue has a
 * current build, unversioned pollers (goalrun run's in-process worker, workers of 0.1.0) stop getting
 * its new goals; so it is turned on for all workers of a queue at once. See docs/deploying.md.
 */
import fs from 'node:fs';
import type { WorkerDeploymentOptions } from '@temporalio/worker';
import { bundleHash, packageVersion, SHORT_HASH_LENGTH } from './build-info';

/** The one Worker Deployment every goalrun worker of a namespace belongs to. */
export const DEPLOYMENT_NAME = 'goalrun';
/** Environment variable that turns versioning on for `goalrun worker` (as the flag does). */
export const VERSIONING_ENV = 'GOALRUN_WORKER_VERSIONING';

/**
 * The build id of a workflow bundle: the package version and a hash of the bundle's code, so two
 * workers share a build id exactly when they run the same workflow code.
 */
export function buildIdOf(bundleFile: string, version = packageVersion()): string {
  // The hash `goalrun --version` shows for the same bundle (worker/build-info.ts).
  return `${version}-${bundleHash(fs.readFileSync(bundleFile, 'utf8')).slice(0, SHORT_HASH_LENGTH)}`;
}

/** Whether the environment turns versioning on. */
export function versioningFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['1', 'true', 'yes', 'on'].includes((env[VERSIONING_ENV] ?? '').toLowerCase());
}

/**
 * The SDK's deployment options of a versioned workflow worker: goals are pinned to the build that
 * started them (a build that would replay their history differently never sees them) and move to the
 * current build when they continue as new (workflows/goal-workflow.ts asks for AUTO_UPGRADE there).
 */
export function deploymentOptions(buildId: string): WorkerDeploymentOptions {
  return {
    useWorkerVersioning: true,
    version: { deploymentName: DEPLOYMENT_NAME, buildId },
    defaultVersioningBehavior: 'PINNED',
  };
}
