/**
 * What a sandbox hides from the processes in it: every home and $GOALRUN_HOME, the host's socket
 * directories when it has no network, the credentials of a home that is itself bound; and the tool
 * directories under a hidden one that it shows again. Shared by the tools' sandbox (launch.ts) and
 * git's (activities/git/safe-git.ts).
 */
import { lstatSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { type SandboxHost, SENSITIVE_HOME_ENTRIES } from './host';
import { cachedExposedPathDirs } from './path-exposure';

/** The real path of an existing directory, else undefined. */
export function realExistingDir(dir: string): string | undefined {
  try {
    const real = realpathSync(dir);
    return statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** Directories that hold the host's Unix sockets (/var/run only where it is not a link to /run). */
export const SOCKET_DIRS: readonly string[] = ['/run', '/var/run'];

function socketDirs(): string[] {
  return SOCKET_DIRS.filter((dir) => {
    try {
      return lstatSync(dir).isDirectory();
    } catch {
      return false;
    }
  });
}

/** Entries of the given homes to hide, for the homes a bind shows itself. */
function sensitiveHomeEntries(homes: readonly string[]): { dirs: string[]; files: string[] } {
  const dirs: string[] = [];
  const files: string[] = [];
  for (const home of homes) {
    for (const entry of SENSITIVE_HOME_ENTRIES) {
      const full = path.join(home, entry);
      try {
        const stat = lstatSync(full);
        if (stat.isDirectory()) dirs.push(full);
        else files.push(full);
      } catch {
        // absent: nothing to hide
      }
    }
  }
  return { dirs, files };
}

/** What a sandbox hides from its processes, and the tool directories it shows again. */
export interface Concealment {
  /** Replaced by an empty read-only tmpfs: the homes, $GOALRUN_HOME, socket directories, a bound home's credentials. */
  hide: string[];
  /** Files of a bound home replaced by an empty file (~/.netrc). */
  maskFiles: string[];
  /** PATH directories under a hidden one, shown again read-only. */
  expose: string[];
}

/**
 * What a sandbox with these binds (real paths) hides: every home and $GOALRUN_HOME, the host's
 * socket directories without the network, and the credentials of a home that is itself bound.
 */
export function concealment(host: SandboxHost, binds: readonly string[], network: boolean): Concealment {
  const homes = [
    ...new Set(host.homes.map(realExistingDir).filter((dir): dir is string => dir !== undefined)),
  ];
  const goalrunHome = realExistingDir(host.goalrunHome);
  const hidden = goalrunHome ? [...homes, goalrunHome] : homes;
  // A new network namespace cuts TCP, not Unix sockets: without the network, the host's socket
  // directories (PostgreSQL, Docker, D-Bus, ssh-agent) are hidden too.
  const sockets = network ? [] : socketDirs();
  // A home bound as the workspace (or a writable root) is visible: its credentials are hidden one by one.
  const sensitive = sensitiveHomeEntries(homes.filter((home) => binds.includes(home)));
  return {
    hide: [...hidden, ...sockets, ...sensitive.dirs],
    maskFiles: sensitive.files,
    expose: cachedExposedPathDirs(host.hostEnv.PATH, hidden, binds),
  };
}
