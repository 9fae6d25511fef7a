/**
 * Worker Deployments (Temporal's worker versioning): which build of the workflow code a worker runs,
 * and how goals move between builds. Opt-in (`goalrun worker --versioning`, or GOALRUN_WORKER_VERSIONING=1):
 * a versioned worker takes no task of an unversioned goal, and none at all until its build is made
 * current, so turning it on for every worker would strand the goals that unversioned workers
 * (every release so far) started. See docs/deploying.md.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { WorkerDeploymentOptions } from '@temporalio/worker';

/** The one Worker Deployment every goalrun worker of a namespace belongs to. */
export const DEPLOYMENT_NAME = 'goalrun';
/** Hex characters of the bundle's sha256 in a build id: enough that two builds never meet. */
const BUNDLE_HASH_CHARS = 12;
/** Environment variable that turns versioning on for `goalrun worker` (as the flag does). */
export const VERSIONING_ENV = 'GOALRUN_WORKER_VERSIONING';

/** The package version this build was made from. */
export function packageVersion(): string {
  for (const candidate of [
    path.resolve(__dirname, '../package.json'),
    path.resolve(__dirname, '../../package.json'),
  ]) {
    try {
      const parsed = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (parsed.name === 'goalrun' && parsed.version) return parsed.version;
    } catch {
      // try the next place
    }
  }
  return '0.0.0';
}

/**
 * The build id of a workflow bundle: the package version and a hash of the bundle's code, so two
 * workers share a build id exactly when they run the same workflow code.
 */
export function buildIdOf(bundleFile: string, version = packageVersion()): string {
  const hash = createHash('sha256').update(fs.readFileSync(bundleFile)).digest('hex');
  return `${version}-${hash.slice(0, BUNDLE_HASH_CHARS)}`;
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
