/**
 * The clean itself, shared by `goalrun clean` and the scheduled retention activity (issue 17), so a
 * configured retention removes exactly what `clean --all --yes` with the same rule would: never a
 * session Temporal still runs, each one removed in one store transaction under its operation lock,
 * then its closed workflow executions deleted from Temporal.
 */

import type { Client } from '@temporalio/client';
import type { GoalWorktree } from '../core/goal';
import { CLEANABLE_STATUSES, type RetentionRule, sessionsToClean } from '../core/retention';
import { workflowIdOf } from '../core/workflow-names';
import { lockSession } from '../store/operation-lock';
import type { SessionRow, SessionStore } from '../store/types';
import { removeGoalWorktree, worktreeKeepReason } from './goal-worktree';
import { removeSnapshots } from './snapshot-cleanup';

/** Sessions looked at in one clean. */
export const CLEAN_SCAN_LIMIT = 100_000;
/** How long clean waits for a session busy with another operation before it skips it. */
export const CLEAN_LOCK_WAIT_MS = 2_000;

/** What one clean works on. */
export interface CleanScope {
  store: SessionStore;
  client: Client;
  namespace: string;
  /** Project hashes to look at; null: every project. */
  projectHashes: string[] | null;
  rule: RetentionRule;
  /** Says what was kept and why (a goal's worktree with work found nowhere else). */
  note?: (line: string) => void;
}

/** The sessions the rule chooses, leaving out any whose workflow Temporal still runs. */
export async function chooseSessions(scope: CleanScope): Promise<SessionRow[]> {
  const rows = await scope.store.listProjectSessions(scope.projectHashes, CLEAN_SCAN_LIMIT);
  const candidates = rows.map((row) => ({
    ...row,
    name: row.name ?? null,
    cleanedAt: row.cleanedAt ?? null,
  }));
  // Ask Temporal about the chosen ones until none of them runs (each one found running is left out,
  // and may let an older one in).
  const running = new Set<string>();
  let chosen = sessionsToClean(candidates, scope.rule, running);
  for (;;) {
    const statuses = await Promise.all(
      chosen.map(async (row) => [row.id, await executionStatus(scope.client, row.id)] as const),
    );
    const found = statuses.filter(([, status]) => status === 'RUNNING').map(([id]) => id);
    if (found.length === 0) return chosen;
    for (const id of found) running.add(id);
    chosen = sessionsToClean(candidates, scope.rule, running);
  }
}

/** Removes the chosen sessions; returns those removed (a busy or restarted one is skipped). */
export async function removeSessions(
  scope: CleanScope,
  chosen: readonly SessionRow[],
  onEach: () => void = () => {},
): Promise<SessionRow[]> {
  const removed: SessionRow[] = [];
  // The snapshots of the removed sessions, by workspace: one prune per repository, after the loop.
  const snapshots = new Map<string, string[]>();
  // The worktrees of removed `--worktree` goals: removed after their snapshots, unless they hold work.
  const worktrees: GoalWorktree[] = [];
  for (const row of chosen) {
    onEach();
    const lock = await lockSession(scope.store, row.id, 'clean', CLEAN_LOCK_WAIT_MS).catch(() => null);
    if (!lock) continue;
    try {
      if ((await executionStatus(scope.client, row.id)) === 'RUNNING') continue;
      // Read before the clean drops the goal state: a fork's workspace is its own worktree.
      const workspace = workspaceOf(row);
      const worktree = worktreeOf(row);
      if (!(await scope.store.cleanSession(row.id, CLEANABLE_STATUSES))) continue;
      removed.push(row);
      if (worktree) worktrees.push(worktree);
      snapshots.set(workspace, [...(snapshots.get(workspace) ?? []), row.id]);
    } finally {
      await lock.release();
    }
    await deleteClosedExecutions(scope, row.id);
  }
  // Refs are outside the store's transaction: a repository that is gone or elsewhere keeps nothing to delete.
  for (const [workspace, ids] of snapshots) {
    onEach();
    await removeSnapshots(workspace, ids).catch(() => undefined);
  }
  for (const worktree of worktrees) {
    onEach();
    const keep = await worktreeKeepReason(worktree).catch(
      (err) => `it could not be checked: ${(err as Error).message}`,
    );
    if (keep) scope.note?.(`kept the worktree ${worktree.path}: ${keep}`);
    else await removeGoalWorktree(worktree).catch(() => undefined);
  }
  return removed;
}

/** The worktree a `--worktree` goal ran in, as its saved definition says. */
function worktreeOf(row: SessionRow): GoalWorktree | undefined {
  const worktree = (row.goalState as { goal?: { worktree?: Partial<GoalWorktree> } } | null)?.goal?.worktree;
  if (
    typeof worktree?.path === 'string' &&
    typeof worktree.branch === 'string' &&
    typeof worktree.repository === 'string'
  )
    return { path: worktree.path, branch: worktree.branch, repository: worktree.repository };
  return undefined;
}

/** The workspace of a session's goal (a fork's own worktree), else its project directory. */
function workspaceOf(row: SessionRow): string {
  const goal = (row.goalState as { goal?: { workspace?: unknown } } | null)?.goal;
  return typeof goal?.workspace === 'string' ? goal.workspace : row.projectDir;
}

/** The status of the session's latest workflow execution; null when Temporal does not know it. */
async function executionStatus(client: Client, sessionId: string): Promise<string | null> {
  try {
    return (await client.workflow.getHandle(workflowIdOf(sessionId)).describe()).status.name;
  } catch (err) {
    if ((err as Error).name === 'WorkflowNotFoundError') return null;
    throw err;
  }
}

/** Deletes every closed execution of the session's workflow from Temporal (a running one is never there). */
async function deleteClosedExecutions(scope: CleanScope, sessionId: string): Promise<void> {
  const workflowId = workflowIdOf(sessionId);
  for await (const execution of scope.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    if (execution.status.name === 'RUNNING') continue;
    await scope.client.workflowService
      .deleteWorkflowExecution({
        namespace: scope.namespace,
        workflowExecution: { workflowId, runId: execution.runId },
      })
      .catch(() => undefined);
  }
}
