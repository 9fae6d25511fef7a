/**
 * `goalrun upgrade-check [--releases N] [--json]`: the open goals whose current run was started by a
 * build N or more releases older than this one. Which build started a run is read from the patch
 * markers its first workflow task recorded (every execution asks for every patch at its start,
 * workflows/features.ts), against the registry in workflows/patches.ts: a run of 0.1.0 has
 * `keep-every-steering-message` and lacks `command-queue`. Before a release that deprecates or
 * removes the patches of release X, this must list no goal of a build older than X.
 */
import type { Client } from '@temporalio/client';
import { ConfigError } from '../../core/errors';
import { buildOfRun, PATCH_MARKER_NAME, patchIdOfMarker, type RunBuild } from '../../core/patch-procedure';
import { GOAL_WORKFLOW_TYPE, sessionIdOf } from '../../core/workflow-names';
import { expandPatchSets } from '../../workflows/patch-sets';
import { PATCHES, RELEASES } from '../../workflows/patches';
import type { CliContext } from '../context';
import { printJson, say } from '../output';
import { terminalTable } from '../terminal-text';

/** Events read from the start of each run: its first workflow task's markers are among them. */
export const UPGRADE_CHECK_HISTORY_PAGE = 100;
/** The default of --releases: every goal not started by this release. */
const DEFAULT_RELEASES_BEHIND = 1;

/** One open goal as upgrade-check reports it. */
export interface UpgradeCheckGoal extends RunBuild {
  sessionId: string;
  workflowId: string;
  runId: string;
  /** The goal's GoalStatus search attribute (running, paused, waiting_approval, …). */
  status: string;
  runStartedAt: string;
  taskQueue: string;
  /** No workflow task has completed yet: any build may take the run. */
  notStarted: boolean;
  patchMarkers: string[];
}

/** What `--json` prints. */
export interface UpgradeCheckReport {
  version: string;
  releases: readonly string[];
  /** Goals this many releases old or older are listed. */
  releasesBehind: number;
  openGoals: number;
  goals: UpgradeCheckGoal[];
}

/** Reads --releases: a whole number, 0 or more. */
function parseReleases(value: string | undefined): number {
  if (value === undefined) return DEFAULT_RELEASES_BEHIND;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n)) {
    throw new ConfigError(`--releases must be a whole number of releases (0 or more), got "${value}"`);
  }
  return n;
}

/** The patch ids in a page of history events, and whether a workflow task completed there. */
async function runStart(client: Client, workflowId: string, runId: string) {
  const response = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId, runId },
    maximumPageSize: UPGRADE_CHECK_HISTORY_PAGE,
  });
  const markers: string[] = [];
  let workflowTaskCompleted = false;
  for (const event of response.history?.events ?? []) {
    if (event.workflowTaskCompletedEventAttributes) workflowTaskCompleted = true;
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== PATCH_MARKER_NAME) continue;
    const id = patchIdOfMarker(marker.details);
    if (id) markers.push(id);
  }
  return { markers, workflowTaskCompleted };
}

/** Every open goal of the namespace, with the build that started its current run. */
export async function checkOpenGoals(client: Client): Promise<UpgradeCheckGoal[]> {
  const goals: UpgradeCheckGoal[] = [];
  const query = `WorkflowType = '${GOAL_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`;
  for await (const execution of client.workflow.list({ query })) {
    const { markers, workflowTaskCompleted } = await runStart(client, execution.workflowId, execution.runId);
    const build = buildOfRun(expandPatchSets(markers), PATCHES, RELEASES);
    const status = (execution.searchAttributes?.GoalStatus as string[] | undefined)?.[0];
    goals.push({
      sessionId: sessionIdOf(execution.workflowId),
      workflowId: execution.workflowId,
      runId: execution.runId,
      status: status ?? 'running',
      runStartedAt: execution.startTime.toISOString(),
      taskQueue: execution.taskQueue,
      notStarted: !workflowTaskCompleted,
      patchMarkers: markers,
      ...build,
      // A run no worker has taken yet records the markers of whichever build takes it.
      ...(workflowTaskCompleted ? {} : { release: 'not started', releasesBehind: 0 }),
    });
  }
  return goals.sort(
    (a, b) => b.releasesBehind - a.releasesBehind || a.runStartedAt.localeCompare(b.runStartedAt),
  );
}

/** The table of the listed goals. */
function printTable(goals: UpgradeCheckGoal[]): void {
  const rows = [
    ['GOAL', 'STATUS', 'RUN STARTED', 'BUILD', 'BEHIND', 'TASK QUEUE'],
    ...goals.map((goal) => [
      goal.sessionId,
      goal.status,
      goal.runStartedAt.replace('T', ' ').slice(0, 19),
      goal.release + (goal.removedMarkers.length > 0 ? ' (cannot replay here)' : ''),
      String(goal.releasesBehind),
      goal.taskQueue,
    ]),
  ];
  for (const line of terminalTable(rows)) say(line);
}

/** `goalrun upgrade-check`. Exit 0 whatever it finds: it reports, the operator decides. */
export async function upgradeCheckCommand(
  context: CliContext,
  options: { releases?: string; json?: boolean },
): Promise<number> {
  const releasesBehind = parseReleases(options.releases);
  const client = await context.temporal();
  const open = await checkOpenGoals(client);
  const listed = open.filter((goal) => goal.releasesBehind >= releasesBehind);
  const version = RELEASES.at(-1) as string;
  if (options.json) {
    const report: UpgradeCheckReport = {
      version,
      releases: RELEASES,
      releasesBehind,
      openGoals: open.length,
      goals: listed,
    };
    printJson(report);
    return 0;
  }
  const older = `builds ${releasesBehind} or more releases older than ${version}`;
  if (listed.length === 0) {
    say(`no open goal of ${open.length} was started by ${older}`);
    return 0;
  }
  printTable(listed);
  say('');
  say(
    `${listed.length} of ${open.length} open goals run on ${older}: let them finish (or run workers of their ` +
      'build for them) before deploying a release that deprecates or removes their patches (README: Upgrading with goals in flight)',
  );
  return 0;
}
