/**
 * The environment snapshot of a goal's first message (spec: first message): the working directory,
 * the OS, the date and a short `git status`, taken on the tool host, with `git` run inside the
 * goal's sandbox: the model worker never touches the workspace.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NOT_A_GIT_REPOSITORY } from '../../core/extensions/workspace-context';
import type { SandboxSettings } from '../../core/sandbox-settings';
import { safeGitArgs } from '../git/safe-git';
import type { SandboxHost } from '../sandbox/host';
import { runCaptured } from '../sandbox/run-captured';

/** How much of `git status` the snapshot keeps: enough to orient, not a transcript-filler. */
const GIT_STATUS_MAX_LINES = 40;
/** `git status` in a huge repository must not hold up the goal's start. */
const GIT_STATUS_TIMEOUT_MS = 10_000;

/** The snapshot's facts. */
export interface EnvironmentSnapshot {
  workingDirectory: string;
  os: string;
  date: string;
  git: string;
}

/** Takes the snapshot of a workspace under a goal's sandbox settings. */
export async function environmentSnapshot(input: {
  workspace: string;
  sessionId: string;
  sandbox: SandboxSettings;
  host: SandboxHost;
  now: Date;
  signal?: AbortSignal;
}): Promise<EnvironmentSnapshot> {
  return {
    workingDirectory: input.workspace,
    os: `${os.type()} ${os.release()} (${os.platform()}/${os.arch()})`,
    date: input.now.toISOString(),
    git: await gitStatus(input),
  };
}

async function gitStatus(input: {
  workspace: string;
  sessionId: string;
  sandbox: SandboxSettings;
  host: SandboxHost;
  signal?: AbortSignal;
}): Promise<string> {
  // No `.git` at or above the workspace: git could only say so, and starting a sandbox for that is
  // most of what a plain folder's gathering costs (a process, a cgroup and a network namespace).
  if (!insideGitRepository(input.workspace)) return NOT_A_GIT_REPOSITORY;
  const run = await runCaptured({
    // No fsmonitor, no hook: even in the sandbox, git runs nothing the workspace names.
    argv: ['git', ...safeGitArgs(['status', '--short', '--branch'])],
    workspace: input.workspace,
    sessionId: input.sessionId,
    settings: input.sandbox,
    host: input.host,
    timeoutMs: GIT_STATUS_TIMEOUT_MS,
    signal: input.signal,
  });
  if (run.startError) return `unknown (${run.startError})`;
  if (run.timedOut) return `unknown (git status took over ${GIT_STATUS_TIMEOUT_MS / 1000} s)`;
  if (run.code !== 0) {
    // A linked worktree's repository can lie outside what the sandbox shows: git fails there, yet
    // the workspace is a repository (and its snapshots work on the tool host).
    return insideGitRepository(input.workspace)
      ? `unknown (git status failed in the sandbox: ${run.stderr.trim().split('\n')[0] ?? ''})`
      : NOT_A_GIT_REPOSITORY;
  }
  const lines = run.stdout.trimEnd().split('\n');
  const shown = lines.slice(0, GIT_STATUS_MAX_LINES).join('\n  ');
  const more = lines.length > GIT_STATUS_MAX_LINES ? `\n  … ${lines.length - GIT_STATUS_MAX_LINES} more` : '';
  return `\n  ${shown}${more}`;
}

/** Whether the directory or one above it holds a `.git` (a directory, or a worktree's file). */
function insideGitRepository(workspace: string): boolean {
  let dir = path.resolve(workspace);
  for (;;) {
    if (fs.existsSync(path.join(dir, '.git'))) return true;
    const parent = path.dirname(dir);
    if (parent === dir) return false;
    dir = parent;
  }
}
