/**
 * `run --worktree` / `start --worktree` (config `worktree`): the goal gets a git worktree of its own
 * under $GOALRUN_HOME/worktrees, on a branch `goalrun/<name or short id>`, made here before the goal
 * starts (so the tool host must be this machine) and removed again if the start fails.
 */
import path from 'node:path';
import { addGoalWorktree, goalBranchName, removeGoalWorktree } from '../activities/goal-worktree';
import { ConfigError } from '../core/errors';
import type { GoalDefinition } from '../core/goal';
import { shortIdOf } from '../core/session-ids';
import type { CliContext } from './context';
import { notice } from './output';

/** The goal, moved into a new worktree when `--worktree` (or config `worktree`) asks for one. */
export async function placeInWorktree(
  context: CliContext,
  goal: GoalDefinition,
  options: { worktree?: boolean; json?: boolean },
  name?: string,
): Promise<GoalDefinition> {
  if (!(options.worktree ?? context.settings.config.worktree ?? false)) return goal;
  if (goal.toolTaskQueue)
    throw new ConfigError(
      '--worktree makes the worktree on this machine, so it cannot go with --tools-queue (config tools_queue): a tool host elsewhere would not see it',
    );
  const short = shortIdOf(goal.sessionId);
  const branch = goalBranchName(name ?? short);
  const dir = path.join(context.settings.home, 'worktrees', `${path.basename(goal.workspace)}-${short}`);
  let made: Awaited<ReturnType<typeof addGoalWorktree>>;
  try {
    made = await addGoalWorktree(goal.workspace, branch, dir);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  notice(`worktree ${made.worktree.path} on branch ${branch} (of ${made.worktree.repository})`);
  // The model commits on its branch: the repository's objects and its branch directory are writable to it.
  const sandbox = goal.sandbox
    ? { ...goal.sandbox, writableRoots: [...goal.sandbox.writableRoots, ...made.gitWritable] }
    : undefined;
  return { ...goal, workspace: made.workspace, worktree: made.worktree, ...(sandbox ? { sandbox } : {}) };
}

/** Starts a goal; a worktree made for it is removed when the start fails. */
export async function startingInWorktree<T>(goal: GoalDefinition, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (goal.worktree) await removeGoalWorktree(goal.worktree).catch(() => undefined);
    throw err;
  }
}
