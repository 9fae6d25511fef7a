/**
 * The environment snapshot of a goal's first message (spec: first message): the working directory,
 * the OS, the date and a short `git status`, taken on the tool host, with `git` run inside the
 * goal's sandbox: the model worker never touches the workspace.
 */
import os from 'node:os';
import type { SandboxSettings } from '../../core/sandbox-settings';
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
  const run = await runCaptured({
    argv: ['git', 'status', '--short', '--branch'],
    workspace: input.workspace,
    sessionId: input.sessionId,
    settings: input.sandbox,
    host: input.host,
    timeoutMs: GIT_STATUS_TIMEOUT_MS,
    signal: input.signal,
  });
  if (run.startError) return `unknown (${run.startError})`;
  if (run.timedOut) return `unknown (git status took over ${GIT_STATUS_TIMEOUT_MS / 1000} s)`;
  if (run.code !== 0) return 'not a git repository';
  const lines = run.stdout.trimEnd().split('\n');
  const shown = lines.slice(0, GIT_STATUS_MAX_LINES).join('\n  ');
  const more = lines.length > GIT_STATUS_MAX_LINES ? `\n  … ${lines.length - GIT_STATUS_MAX_LINES} more` : '';
  return `\n  ${shown}${more}`;
}
