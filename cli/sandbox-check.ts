/**
 * The sandbox check `run`, `start`, `resume` and `worker` make before anything starts: a goal whose
 * sandbox needs bubblewrap, on a machine where bubblewrap is missing (or cannot start), is refused
 * with one line naming the fix, instead of starting a goal whose every command then fails.
 */

import { ConfigError } from '../core/errors';
import type { GoalDefinition } from '../core/goal';
import { DEFAULT_SANDBOX, type SandboxMode } from '../core/sandbox-settings';

/** Whether bubblewrap can sandbox here: ok, or the one line that says what is wrong and what to do. */
export async function sandboxProblem(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  // Loaded lazily: read-only commands never probe.
  const { findExecutable } =
    require('../activities/sandbox/host') as typeof import('../activities/sandbox/host');
  const { probeSandbox } =
    require('../activities/sandbox/probe') as typeof import('../activities/sandbox/probe');
  const probe = await probeSandbox(findExecutable('bwrap', env));
  return probe.ok ? undefined : probe.problem;
}

/**
 * Throws a ConfigError (exit 2) when `mode` needs bubblewrap and this machine cannot sandbox.
 * `where` says whose tools would run here (for the message).
 */
export async function requireSandbox(mode: SandboxMode): Promise<void> {
  if (mode === 'off') return;
  const problem = await sandboxProblem();
  if (problem) throw new ConfigError(problem);
}

/**
 * Refuses (exit 2) a goal whose sandbox needs bubblewrap when this machine cannot sandbox. A goal
 * with a tool host (--tools-queue) is not checked here: its tools run there, and that worker checks.
 */
export async function requireSandboxForGoal(goal: GoalDefinition): Promise<void> {
  if (goal.toolTaskQueue === undefined) await requireSandbox(goal.sandbox?.mode ?? DEFAULT_SANDBOX.mode);
}
