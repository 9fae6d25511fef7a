import { accessSync, constants, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';

/** Environment variable that points at an explicit `temporal` CLI binary. */
export const TEMPORAL_CLI_PATH_ENV = 'TEMPORAL_CLI_PATH';

const BINARY_NAME = process.platform === 'win32' ? 'temporal.exe' : 'temporal';

/** Directory where scripts/ensure-temporal.js caches the binary it installs (same rule as the script). */
export function goalrunCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GOALRUN_CACHE_DIR) return resolve(env.GOALRUN_CACHE_DIR);
  const cacheHome = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(cacheHome, 'goalrun');
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findOnPath(env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    // An empty PATH entry means the current directory, which we deliberately do not trust.
    if (!dir) continue;
    const candidate = resolve(dir, BINARY_NAME);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/**
 * Absolute path of a usable `temporal` binary: $TEMPORAL_CLI_PATH, then PATH, then the goalrun cache;
 * null when there is none. Never builds (that is scripts/ensure-temporal.sh's job).
 */
export function findTemporalBinary(env: NodeJS.ProcessEnv = process.env): string | null {
  const explicit = env[TEMPORAL_CLI_PATH_ENV];
  if (explicit && isExecutableFile(explicit)) return resolve(explicit);
  const onPath = findOnPath(env);
  if (onPath) return onPath;
  const cached = join(goalrunCacheDir(env), 'bin', BINARY_NAME);
  return isExecutableFile(cached) ? cached : null;
}

/** Like findTemporalBinary, but throws an Error that tells the user how to get the binary. */
export function requireTemporalBinary(env: NodeJS.ProcessEnv = process.env): string {
  const found = findTemporalBinary(env);
  if (found) return found;
  const explicit = env[TEMPORAL_CLI_PATH_ENV];
  const badExplicit = explicit ? ` (${TEMPORAL_CLI_PATH_ENV}=${explicit} is not an executable file)` : '';
  throw new Error(
    `No Temporal CLI binary found${badExplicit}. goalrun needs it to run a local Temporal dev server.\n` +
      'Get one with `npm run temporal` (or `bash scripts/ensure-temporal.sh`), which puts it once ' +
      `into ${join(goalrunCacheDir(env), 'bin')}: the official download where there is internet, ` +
      'else a build with Go (a few minutes), ' +
      `or install the Temporal CLI yourself and set ${TEMPORAL_CLI_PATH_ENV}=/path/to/temporal, ` +
      'or point TEMPORAL_ADDRESS at a running Temporal server.',
  );
}
