/**
 * What the sandbox needs to know about the machine it runs on: where bubblewrap is, which
 * directories to hide, where each goal's private /tmp lives. Read once per worker process from its
 * environment; tests build their own.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findOnPath } from '../../system/executables';

/** The machine-side facts of the sandbox. */
export interface SandboxHost {
  /** Absolute path of `bwrap`, or null when bubblewrap is not installed. */
  bwrapPath: string | null;
  /** The worker's environment: the source of the allow-listed tool environment. */
  hostEnv: NodeJS.ProcessEnv;
  /**
   * The worker's home directories, all hidden in the sandbox: `$HOME` and the account's home from
   * the password database (they differ when HOME is overridden; ~/.ssh and ~/.aws stay in the latter).
   */
  homes: readonly string[];
  /** goalrun's data directory (hidden in the sandbox): config, embedded store, logs. */
  goalrunHome: string;
  /** goalrun's own package directory (read-only in the sandbox). */
  installDir: string;
  /** Where each session's private /tmp and home are made (one directory per session). */
  stateDir: string;
}

/** Entries of $HOME hidden when $HOME itself is bound into the sandbox (the workspace is $HOME). */
export const SENSITIVE_HOME_ENTRIES: readonly string[] = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.kube',
  '.docker',
  '.netrc',
  '.pgpass',
  '.git-credentials',
  '.npmrc',
  '.config/gcloud',
  '.config/gh',
  // temporal.toml (it may hold an API key) and the Temporal client certificates kept beside it.
  '.config/temporalio',
];

/** Finds an executable on PATH (never in the current directory); null when there is none. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  return findOnPath(name, env);
}

/** goalrun's package directory: the nearest parent of this file with goalrun's package.json. */
export function goalrunInstallDir(start: string = __dirname): string {
  let dir = start;
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'goalrun') return dir;
      } catch {
        // not goalrun's manifest
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(start, '..', '..');
    dir = parent;
  }
}

/** The account's home from the password database, whatever $HOME says; undefined when it has none. */
export function accountHomeDir(): string | undefined {
  try {
    return os.userInfo().homedir || undefined;
  } catch {
    // A uid without a password-database entry (some containers) has no account home.
    return undefined;
  }
}

/**
 * The sandbox host of this worker process, from its environment. `accountHome` is the home the
 * password database names (a parameter so that tests can plant one of their own).
 */
export function sandboxHostFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  accountHome: string | undefined = accountHomeDir(),
): SandboxHost {
  const home = env.HOME || os.homedir() || undefined;
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const homes = [home, accountHome]
    .filter((dir): dir is string => dir !== undefined && path.isAbsolute(dir))
    .map((dir) => path.resolve(dir));
  return {
    bwrapPath: findExecutable('bwrap', env),
    hostEnv: env,
    homes: [...new Set(homes)],
    goalrunHome: path.resolve(env.GOALRUN_HOME || path.join(home ?? os.homedir(), '.goalrun')),
    installDir: goalrunInstallDir(),
    stateDir: path.join(os.tmpdir(), `goalrun-sandbox-${uid}`),
  };
}

let processHost: SandboxHost | undefined;

/** The sandbox host of this process (computed once). */
export function defaultSandboxHost(): SandboxHost {
  processHost ??= sandboxHostFromEnv();
  return processHost;
}

/** A session id as a directory name: safe characters only. */
function sessionDirName(sessionId: string): string {
  const safe = sessionId.replace(/[^A-Za-z0-9._-]/g, '_');
  return safe === '' || safe === '.' || safe === '..' ? '_session' : safe;
}

/** A session's private directories on the host. */
export interface SessionDirs {
  root: string;
  /** Mounted at /tmp in the sandbox. */
  tmp: string;
  /** The sandbox's $HOME, inside its /tmp. */
  home: string;
}

/** Where a sandboxed process finds its home: inside the private /tmp, so it is writable and per goal. */
export const SANDBOX_HOME = '/tmp/home';

/**
 * Creates (when missing) the private directories of a session. The state directory must be ours
 * and not a symlink: /tmp is shared, and someone else's directory there could be read or swapped.
 */
export function ensureSessionDirs(host: SandboxHost, sessionId: string): SessionDirs {
  mkdirSync(host.stateDir, { recursive: true, mode: 0o700 });
  const state = lstatSync(host.stateDir);
  const uid = typeof process.getuid === 'function' ? process.getuid() : state.uid;
  if (!state.isDirectory() || state.uid !== uid) {
    throw new Error(`sandbox state directory ${host.stateDir} is not a directory owned by this user`);
  }
  const root = path.join(host.stateDir, sessionDirName(sessionId));
  const tmp = path.join(root, 'tmp');
  const home = path.join(tmp, 'home');
  mkdirSync(home, { recursive: true, mode: 0o700 });
  return { root, tmp, home };
}

/** The session's private directory (whether or not it exists), for cleanup. */
export function sessionDirRoot(host: SandboxHost, sessionId: string): string {
  return path.join(host.stateDir, sessionDirName(sessionId));
}
