import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { findOnPath, isExecutableFile } from '../system/executables';

/** Environment variable that points at an explicit `temporal` CLI binary. */
export const TEMPORAL_CLI_PATH_ENV = 'TEMPORAL_CLI_PATH';

const BINARY_NAME = process.platform === 'win32' ? 'temporal.exe' : 'temporal';

/** Directory where scripts/ensure-temporal.js caches the binary it installs (same rule as the script). */
export function goalrunCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GOALRUN_CACHE_DIR) return resolve(env.GOALRUN_CACHE_DIR);
  const cacheHome = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(cacheHome, 'goalrun');
}

/**
 * Absolute path of a usable `temporal` binary: $TEMPORAL_CLI_PATH, then PATH, then the goalrun cache;
 * null when there is none. Never builds (that is scripts/ensure-temporal.sh's job).
 */
export function findTemporalBinary(env: NodeJS.ProcessEnv = process.env): string | null {
  const explicit = env[TEMPORAL_CLI_PATH_ENV];
  if (explicit && isExecutableFile(explicit)) return resolve(explicit);
  const onPath = findOnPath(BINARY_NAME, env);
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
