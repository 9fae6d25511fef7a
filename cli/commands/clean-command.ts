/**
 * `goalrun clean`: removes old stopped sessions (issue 17, retention). A dry run unless --yes: it
 * prints what would go and keeps everything. It never touches a session that may still run, keeps the
 * newest N stopped sessions of each project and named ones unless --include-named; each session is
 * removed in one store transaction under its operation lock, then its workspace snapshot refs
 * (refs/goalrun/<session>/*) and its closed workflow executions are deleted.
 */
import { deleteSnapshotRefs } from '../../activities/workspace-snapshot';
import { ConfigError } from '../../core/errors';
import {
  CLEANABLE_STATUSES,
  DEFAULT_RETENTION_KEEP,
  parseRetentionDuration,
  sessionsToClean,
} from '../../core/retention';
import type { SessionRow } from '../../store/types';
import { workflowIdOf } from '../../workflows/names';
import type { CliContext } from '../context';
import { resolveWorkspace } from '../goal-options';
import { workflowStatus } from '../goal-status';
import { printJson, say } from '../output';
import { lockSession } from '../session-lock';
import { projectHashesOf } from '../session-names';
import { sessionLine, summariesOf } from '../session-summary';

/** Sessions looked at in one clean. */
const CLEAN_SCAN_LIMIT = 100_000;
/** How long clean waits for a session busy with another operation before it skips it. */
const CLEAN_LOCK_WAIT_MS = 2_000;

/** Options of `goalrun clean`. */
export interface CleanOptions {
  olderThan?: string;
  keep?: string;
  project?: string;
  all?: boolean;
  includeNamed?: boolean;
  yes?: boolean;
  json?: boolean;
}

export async function cleanCommand(context: CliContext, options: CleanOptions): Promise<number> {
  if (options.project && options.all) throw new ConfigError('give --project DIR or --all, not both');
  const olderThanMs = options.olderThan === undefined ? undefined : parseRetentionDuration(options.olderThan);
  if (olderThanMs === null)
    throw new ConfigError(
      `--older-than must be a duration like 30d, 12h, 90m or 2w, got "${options.olderThan}"`,
    );
  const keep = options.keep === undefined ? DEFAULT_RETENTION_KEEP : Number(options.keep);
  if (!Number.isInteger(keep) || keep < 0)
    throw new ConfigError(`--keep must be a whole number, got "${options.keep}"`);
  const store = await context.sessionStore();
  const scope = options.all ? null : projectHashesOf(resolveWorkspace(options.project));
  const rows = await store.listProjectSessions(scope, CLEAN_SCAN_LIMIT);
  const rule = { olderThanMs, keep, includeNamed: options.includeNamed === true, now: new Date() };
  const candidates = rows.map((row) => ({
    ...row,
    name: row.name ?? null,
    cleanedAt: row.cleanedAt ?? null,
  }));
  // A session Temporal still runs is never cleaned, whatever the store says; ask about the chosen ones
  // until none of them runs (each one found running is left out, and may let an older one in).
  const client = await context.temporal();
  const running = new Set<string>();
  let chosen = sessionsToClean(candidates, rule, running);
  for (;;) {
    const statuses = await Promise.all(
      chosen.map(async (row) => [row.id, await workflowStatus(client, row.id)] as const),
    );
    const found = statuses.filter(([, status]) => status === 'RUNNING').map(([id]) => id);
    if (found.length === 0) break;
    for (const id of found) running.add(id);
    chosen = sessionsToClean(candidates, rule, running);
  }
  if (!options.yes) return report(chosen, false, options.json);
  const removed: SessionRow[] = [];
  for (const row of chosen) {
    const lock = await lockSession(store, row.id, 'clean', CLEAN_LOCK_WAIT_MS).catch(() => null);
    if (!lock) continue;
    try {
      if ((await workflowStatus(client, row.id)) === 'RUNNING') continue;
      // Read before the clean drops the goal state: a fork's workspace is its own worktree.
      const workspace = workspaceOf(row);
      if (!(await store.cleanSession(row.id, CLEANABLE_STATUSES))) continue;
      removed.push(row);
      // Refs are outside the store's transaction: a repository that is gone or elsewhere keeps nothing to delete.
      await deleteSnapshotRefs(workspace, row.id).catch(() => 0);
    } finally {
      await lock.release();
    }
    await deleteClosedExecutions(context, row.id);
  }
  return report(removed, true, options.json);
}

/** Where a session's snapshot refs are: the repository of its goal's workspace (else its project). */
function workspaceOf(row: SessionRow): string {
  const goal = (row.goalState as { goal?: { workspace?: unknown } } | null)?.goal;
  return typeof goal?.workspace === 'string' ? goal.workspace : row.projectDir;
}

function report(rows: SessionRow[], done: boolean, json?: boolean): number {
  const summaries = summariesOf(rows);
  if (json) {
    printJson({ dryRun: !done, sessions: summaries });
    return 0;
  }
  if (rows.length === 0) {
    say(done ? 'removed nothing' : 'nothing to clean');
    return 0;
  }
  say(
    done
      ? `removed ${rows.length} session${rows.length === 1 ? '' : 's'}:`
      : `would remove ${rows.length} session${rows.length === 1 ? '' : 's'} (a dry run: nothing was removed; add --yes):`,
  );
  for (const summary of summaries) say(`  ${sessionLine(summary)}  (${summary.projectDir})`);
  return 0;
}

/** Deletes every closed execution of the session's workflow from Temporal (a running one is never there). */
async function deleteClosedExecutions(context: CliContext, sessionId: string): Promise<void> {
  const client = await context.temporal();
  const workflowId = workflowIdOf(sessionId);
  const namespace = context.settings.namespace;
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    if (execution.status.name === 'RUNNING') continue;
    await client.workflowService
      .deleteWorkflowExecution({ namespace, workflowExecution: { workflowId, runId: execution.runId } })
      .catch(() => undefined);
  }
}
