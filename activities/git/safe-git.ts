/**
 * How goalrun runs git on a repository the model can write (snapshots, fork's worktree, clean), so
 * that nothing the model planted runs: never with the worker's environment, never with a config
 * that names a program. Git runs in a sandbox of its own (bubblewrap: no network, the homes hidden,
 * the tools' allow-listed environment, only the directories it must write writable), or, where there
 * is no sandbox, on the host with an empty environment plus PATH, no system or global config, and a
 * HOME that is an empty directory. Either way every command carries SAFE_GIT_CONFIG, and the caller
 * has checked the repository's pointer files first (repository-layout.ts).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SandboxMode } from '../../core/sandbox-settings';
import { buildBwrapArgs, SANDBOX_TMP } from '../sandbox/bwrap-args';
import { concealment } from '../sandbox/concealment';
import { toolEnvironment } from '../sandbox/environment';
import type { SandboxHost } from '../sandbox/host';
import { checkSandbox } from '../sandbox/probe';
import { startChild } from '../sandbox/spawn-child';
import { killProcessGroup } from '../tools/process-group';
import type { RepositoryLayout } from './repository-layout';

/**
 * Config given on the command line, which wins over every file: no fsmonitor and no hook (the two
 * ways a repository makes git run a program), no untracked cache, no automatic gc or maintenance,
 * no reflogs of goalrun's refs, no transport, no submodule recursion, no signing program.
 */
export const SAFE_GIT_CONFIG: readonly string[] = [
  'core.fsmonitor=',
  'core.hooksPath=/dev/null',
  'core.untrackedCache=false',
  'gc.auto=0',
  'maintenance.auto=false',
  'core.logAllRefUpdates=false',
  'protocol.allow=never',
  'submodule.recurse=false',
  'commit.gpgSign=false',
];

/** git's arguments with SAFE_GIT_CONFIG in front. */
export function safeGitArgs(args: readonly string[]): string[] {
  return [...SAFE_GIT_CONFIG.flatMap((entry) => ['-c', entry]), ...args];
}

/** Longest one git run may take before it is killed. */
export const GIT_RUN_TIMEOUT_MS = 120_000;
/** The most a git run's stdout may hold (a listing of a large work tree). */
const GIT_OUTPUT_MAX_BYTES = 64 * 1024 * 1024;

/** Where git runs: in a sandbox of its own, or on the host by the rule above. */
export type GitPlace = { sandboxed: true; host: SandboxHost } | { sandboxed: false };

/** One place to run git on one repository. */
export interface GitJob {
  place: GitPlace;
  layout: RepositoryLayout;
  /** Host directories git may write (objects, refs, a new worktree); the rest is read-only in a sandbox. */
  writable: readonly string[];
  /** A private scratch directory of the caller (a temporary index): mounted at /tmp in a sandbox. */
  scratch: string;
  /** Variables for git (GIT_INDEX_FILE, an identity). */
  env?: Record<string, string>;
  timeoutMs?: number;
}

/** How long reading one config value may take. */
const GIT_CONFIG_TIMEOUT_MS = 5_000;
/** A config value longer than this is not a path git would use. */
const GIT_CONFIG_MAX_BYTES = 64 * 1024;

/**
 * One config value as git reads it for a work tree, the user's global config included (a
 * `core.hooksPath` there is protected too), or undefined. `git config --get` only reads files (no
 * hook, no fsmonitor), so it runs on the host, with nothing of the worker's environment but PATH and
 * HOME, and without SAFE_GIT_CONFIG, which would override the very value it reads. It is started by
 * the tool host's spawn server, like the tools: a synchronous run forked the worker's whole heap and
 * held its event loop for every sandboxed call (issue 30: 18 % of the worker's main thread at 1,000
 * goals).
 */
export async function readGitConfig(root: string, key: string): Promise<string | undefined> {
  const started = await startChild({
    file: 'git',
    args: ['-C', root, 'config', '--get', key],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...(process.env.HOME ? { HOME: process.env.HOME } : {}),
      GIT_TERMINAL_PROMPT: '0',
    },
    cwd: '/',
    stdin: false,
    infoFd: false,
  });
  if (!started.ok) return undefined;
  const { child, pid } = started;
  const chunks: Buffer[] = [];
  let size = 0;
  child.stdout?.on('data', (chunk: Buffer) => {
    if (size >= GIT_CONFIG_MAX_BYTES) return;
    chunks.push(chunk);
    size += chunk.length;
  });
  child.stderr?.resume();
  const timer = setTimeout(() => void killProcessGroup(pid, 0), GIT_CONFIG_TIMEOUT_MS);
  try {
    const code = await new Promise<number | null>((resolve) =>
      child.once('close', (exit: number | null) => resolve(exit)),
    );
    if (code !== 0) return undefined;
    return Buffer.concat(chunks).toString('utf8').trim() || undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** A git run that ended. */
export interface GitOutput {
  stdout: string;
  stderr: string;
}

/** A git run that failed: its exit and what git said. */
export class GitRunFailed extends Error {
  readonly type = 'GitRunFailed';
  constructor(
    readonly what: string,
    readonly code: number | string | null,
    readonly stderr: string,
  ) {
    super(
      `${what} failed (${code ?? 'killed'}): ${stderr.trim().split('\n').slice(-3).join(' ') || 'no output'}`,
    );
  }
}

/**
 * Where git runs for a goal of this sandbox mode: `off` runs it on the host by the rule; any other
 * mode in the sandbox, and a sandbox that cannot start is the error. `hostWhenUnavailable` (the CLI
 * on a machine without bubblewrap) runs it on the host instead.
 */
export async function gitPlaceFor(
  mode: SandboxMode | undefined,
  host: SandboxHost,
  hostWhenUnavailable = false,
): Promise<GitPlace | { error: string }> {
  if (mode === 'off') return { sandboxed: false };
  const probe = await checkSandbox(host);
  if (probe.ok) return { sandboxed: true, host };
  return hostWhenUnavailable ? { sandboxed: false } : { error: probe.problem };
}

/** A file of the scratch directory as git sees it (at /tmp in a sandbox). */
export function scratchPath(job: Pick<GitJob, 'place' | 'scratch'>, name: string): string {
  return path.join(job.place.sandboxed ? SANDBOX_TMP : job.scratch, name);
}

/** A new private scratch directory (the caller removes it with {@link removeScratch}). */
export function makeScratch(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'goalrun-git-'));
  // An empty HOME: git finds no ~/.gitconfig, no ~/.config/git/ignore or attributes in it.
  mkdirSync(path.join(dir, 'home'));
  return dir;
}

/** Removes a scratch directory. */
export function removeScratch(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Runs git commands on one repository by the safe rule, in the place the host allows (on the host
 * where there is no sandbox); the scratch directory is removed after.
 */
export async function withGit<T>(
  layout: RepositoryLayout,
  writable: string[],
  host: SandboxHost,
  work: (job: GitJob) => Promise<T>,
): Promise<T> {
  const place = await gitPlaceFor(undefined, host, true);
  if ('error' in place) throw new Error(place.error);
  const scratch = makeScratch();
  try {
    return await work({ place, scratch, layout, writable });
  } finally {
    removeScratch(scratch);
  }
}

/** Runs git with the safe config; resolves with its output, rejects with GitRunFailed. */
export function runGit(job: GitJob, args: readonly string[]): Promise<GitOutput> {
  return launch(job, ['git', ...safeGitArgs(args)], `git ${args[0] ?? ''}`);
}

/** git's output, or null when it fails (a missing ref). */
export async function tryGit(job: GitJob, args: readonly string[]): Promise<string | null> {
  try {
    return (await runGit(job, args)).stdout;
  } catch (err) {
    if (err instanceof GitRunFailed) return null;
    throw err;
  }
}

/**
 * Runs a POSIX shell script whose git commands go through the function `g` (git with the safe
 * config): several git commands for one sandbox start. Values reach it as arguments ($1, $2...),
 * never inside the script's text.
 */
export function runGitScript(
  job: GitJob,
  what: string,
  script: string,
  args: readonly string[],
): Promise<GitOutput> {
  const prelude = `g() { git ${safeGitArgs([]).map(shellQuote).join(' ')} "$@"; }`;
  return launch(job, ['sh', '-c', `${prelude}\n${script}`, 'sh', ...args], what);
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The variables every git run gets besides the caller's: the repository named, no config but its own. */
function gitVariables(job: GitJob): Record<string, string> {
  return {
    GIT_DIR: job.layout.gitDir,
    GIT_WORK_TREE: job.layout.top,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    HOME: scratchPath(job, 'home'),
    ...job.env,
  };
}

/** The program, arguments and environment of one run in its place. */
function commandLine(
  job: GitJob,
  argv: string[],
): { file: string; args: string[]; env: Record<string, string> } {
  if (!job.place.sandboxed) {
    // The host: nothing of the worker's environment but PATH.
    return {
      file: argv[0],
      args: argv.slice(1),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...gitVariables(job) },
    };
  }
  const { host } = job.place;
  const { top, gitDir, commonDir } = job.layout;
  const binds = [top, ...job.writable];
  const concealed = concealment(host, binds, false);
  const args = buildBwrapArgs({
    writable: true,
    network: false,
    // The work tree is bound, then mounted read-only over itself; only `writable` is written.
    workspace: top,
    writableRoots: job.writable,
    privateTmp: job.scratch,
    hide: concealed.hide,
    protect: [top, gitDir, commonDir].filter((dir) => !job.writable.includes(dir)),
    expose: concealed.expose,
    maskFiles: concealed.maskFiles,
    cwd: top,
    command: argv,
  });
  return {
    file: host.bwrapPath as string,
    args,
    env: { ...toolEnvironment(host.hostEnv, [], { TMPDIR: SANDBOX_TMP }), ...gitVariables(job) },
  };
}

function launch(job: GitJob, argv: string[], what: string): Promise<GitOutput> {
  const line = commandLine(job, argv);
  return new Promise((resolve, reject) => {
    execFile(
      line.file,
      line.args,
      {
        cwd: job.layout.top,
        env: line.env,
        timeout: job.timeoutMs ?? GIT_RUN_TIMEOUT_MS,
        killSignal: 'SIGKILL',
        maxBuffer: GIT_OUTPUT_MAX_BYTES,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        if (!err) return resolve({ stdout, stderr });
        const code = (err as { code?: number | string }).code ?? null;
        reject(new GitRunFailed(what, err.killed ? 'timed out' : code, stderr || err.message));
      },
    );
  });
}
