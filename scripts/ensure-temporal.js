#!/usr/bin/env node
'use strict';
/**
 * Prints the absolute path of a usable `temporal` CLI binary on stdout; every log line goes to stderr,
 * so callers can do `TEMPORAL="$(node scripts/ensure-temporal.js)"`. Plain CommonJS: it runs before
 * the build (npm test's pretest) and needs nothing but Node.
 *
 * Sources, in order (cli/temporal-binary.ts looks up 1-3 the same way, without installing):
 *   1. $TEMPORAL_CLI_PATH, if set and executable
 *   2. `temporal` on PATH
 *   3. the goalrun cache: ${GOALRUN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/goalrun}/bin/temporal
 *   4. the Temporal SDK's own download, the one @temporalio/testing's TestWorkflowEnvironment uses
 *      (`cached-download`): the same cache file in the OS temp dir, the same version pin (the default
 *      for this SDK version) and the same `.downloading` lock, because it is the SDK's code that
 *      downloads. Used when the SDK has it cached or temporal.download answers (the machine has
 *      internet). The binary is then copied into the goalrun cache, since the SDK's copy expires.
 *   5. `go install` through the Go module proxy, for machines that reach only a module proxy.
 * It says which source it used.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** The CLI module and tags that `go install module@version` can build (no `replace` in their go.mod). */
const CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
const CLI_VERSIONS = ['v1.5.1', 'v1.5.0', 'v1.4.1'];
/** The CLI's go.mod says `go 1.25.0`. */
const MIN_GO_MINOR = 25;
/** How long a second process waits for the first one's build. */
const LOCK_WAIT_MS = 30 * 60_000;
const LOCK_POLL_MS = 2_000;
/** How long the probe of temporal.download may take before the machine counts as offline. */
const DOWNLOAD_PROBE_TIMEOUT_MS = 10_000;
/** The SDK names its download `temporal-<sdk-name>-<sdk-version>` (sdk-core ephemeral_server). */
const SDK_NAME = 'sdk-typescript';
const BINARY_NAME = process.platform === 'win32' ? 'temporal.exe' : 'temporal';

/** What each source is called in the final message. */
const SOURCE_NAMES = {
  explicit: 'TEMPORAL_CLI_PATH',
  path: 'PATH',
  cache: 'the goalrun cache',
  sdkCache: "the Temporal SDK's download cache",
  download: "the official download (temporal.download, as the Temporal SDK's test environment fetches it)",
  go: 'go install through the Go module proxy',
};

/** The goalrun cache directory (the same rule as cli/temporal-binary.ts). */
function goalrunCacheDir(env) {
  if (env.GOALRUN_CACHE_DIR) return path.resolve(env.GOALRUN_CACHE_DIR);
  return path.join(env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), '.cache'), 'goalrun');
}

function isExecutableFile(file) {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(env) {
  for (const dir of (env.PATH || '').split(path.delimiter)) {
    // An empty entry means the current directory, which is not trusted.
    if (!dir) continue;
    const candidate = path.resolve(dir, BINARY_NAME);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/** The version of the installed Temporal SDK, or null when node_modules has none. */
function sdkVersion() {
  try {
    return require('@temporalio/testing/package.json').version;
  } catch {
    return null;
  }
}

/** Where the SDK's `cached-download` keeps the dev server binary (its default directory: the OS temp dir). */
function sdkCachedPath(version, tmpdir = os.tmpdir()) {
  return path.join(tmpdir, `temporal-${SDK_NAME}-${version}${process.platform === 'win32' ? '.exe' : ''}`);
}

/**
 * The real boundaries: everything that touches the network, the SDK or Go. Tests replace them.
 * Each returns a path, throws with a reason, or (probe, hasGo) answers a question.
 */
function realBoundaries(env, log) {
  const version = sdkVersion();
  return {
    /** The SDK's cached download, if it is there (no network needed). */
    sdkCached() {
      if (!version) return null;
      const file = sdkCachedPath(version);
      return isExecutableFile(file) ? file : null;
    },
    /** Whether temporal.download answers (the machine has internet); the reason when not. */
    async probeDownload() {
      if (!version) return { ok: false, reason: '@temporalio/testing is not installed (run npm ci first)' };
      const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch] || process.arch;
      const platform = { darwin: 'darwin', win32: 'windows' }[process.platform] || 'linux';
      const url = `https://temporal.download/cli/default?arch=${arch}&platform=${platform}&format=tar.gz&sdk-name=${SDK_NAME}&sdk-version=${version}`;
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_PROBE_TIMEOUT_MS) });
        return response.ok
          ? { ok: true }
          : { ok: false, reason: `temporal.download answered ${response.status}` };
      } catch (err) {
        return { ok: false, reason: `temporal.download is not reachable (${describeError(err)})` };
      }
    },
    /** Lets the SDK download its dev server (it starts one briefly and stops it) and returns the file. */
    async sdkDownload() {
      const { TestWorkflowEnvironment } = require('@temporalio/testing');
      log(`downloading the Temporal CLI ${SDK_NAME} ${version} the way the SDK's test environment does…`);
      const testEnv = await TestWorkflowEnvironment.createLocal({
        server: { executable: { type: 'cached-download' }, ui: false },
      });
      await testEnv.teardown();
      const file = sdkCachedPath(version);
      if (!isExecutableFile(file)) throw new Error(`the SDK reported success but ${file} is not there`);
      return file;
    },
    hasGo() {
      return spawnSync('go', ['version'], { stdio: 'ignore' }).status === 0;
    },
    goInstall(binDir) {
      return goInstall(binDir, env, log);
    },
  };
}

/**
 * Finds or installs the binary. Returns `{ path, source }`; throws an Error whose message says what
 * was tried and what the user can do. `deps` carries env, log and the boundaries (see realBoundaries).
 */
async function ensureTemporal(deps) {
  const { env, log } = deps;
  const explicit = env.TEMPORAL_CLI_PATH;
  if (explicit) {
    if (isExecutableFile(explicit)) return found(path.resolve(explicit), 'explicit', log);
    log(`warning: TEMPORAL_CLI_PATH=${explicit} is not an executable file; looking elsewhere`);
  }
  const fromPath = onPath(env);
  if (fromPath) return found(fromPath, 'path', log);
  const binDir = path.join(goalrunCacheDir(env), 'bin');
  const target = path.join(binDir, BINARY_NAME);
  if (isExecutableFile(target)) return found(target, 'cache', log);

  const cachedBySdk = deps.sdkCached();
  if (cachedBySdk) return found(installCopy(cachedBySdk, target), 'sdkCache', log);

  const reasons = [];
  const probe = await deps.probeDownload();
  if (probe.ok) {
    try {
      return found(installCopy(await deps.sdkDownload(), target), 'download', log);
    } catch (err) {
      reasons.push(`the SDK's download failed: ${describeError(err)}`);
      log(`the SDK's download failed (${describeError(err)}); trying go install`);
    }
  } else {
    reasons.push(probe.reason);
    log(`${probe.reason}; trying go install through the Go module proxy`);
  }

  if (!deps.hasGo()) {
    reasons.push("'go' is not installed");
    throw new Error(
      `no temporal binary found (TEMPORAL_CLI_PATH, PATH, ${target}) and none could be installed: ${reasons.join('; ')}.\n` +
        '  With internet, rerun this script (it downloads the official binary); without it, install Go >= 1.' +
        `${MIN_GO_MINOR} (https://go.dev/dl/) and rerun it,\n` +
        '  or install the Temporal CLI yourself and set TEMPORAL_CLI_PATH=/path/to/temporal.',
    );
  }
  return found(await deps.goInstall(binDir), 'go', log);
}

function found(file, source, log) {
  log(`using ${file} (source: ${SOURCE_NAMES[source]})`);
  return { path: file, source };
}

/** Copies a binary into the goalrun cache through a temp file and a rename, so nobody sees half a file. */
function installCopy(from, target) {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const temp = `${target}.${process.pid}.tmp`;
  fs.copyFileSync(from, temp);
  fs.chmodSync(temp, 0o755);
  fs.renameSync(temp, target);
  return target;
}

/** Builds the CLI with `go install` into binDir, one process at a time (a lock in the cache dir). */
async function goInstall(binDir, env, log) {
  const cacheDir = path.dirname(binDir);
  const target = path.join(binDir, BINARY_NAME);
  fs.mkdirSync(binDir, { recursive: true });
  const release = await takeLock(path.join(cacheDir, 'temporal-build.lock.d'), log);
  const buildDir = fs.mkdtempSync(path.join(cacheDir, 'build.'));
  try {
    // Whoever held the lock before us may have finished the build.
    if (isExecutableFile(target)) return target;
    const goEnv = {
      ...env,
      GOBIN: path.join(buildDir, 'bin'),
      GOFLAGS: '-mod=mod',
      GOWORK: 'off',
      GO111MODULE: 'on',
      CGO_ENABLED: '0',
    };
    const goVersion = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' }).stdout.trim();
    const minor = Number(/^go1\.(\d+)/.exec(goVersion)?.[1]);
    if (Number.isInteger(minor) && minor < MIN_GO_MINOR) {
      // `auto` fetches a newer toolchain through the same module proxy.
      log(`local ${goVersion} is older than go1.${MIN_GO_MINOR}; letting Go fetch a newer toolchain`);
      goEnv.GOTOOLCHAIN = 'auto';
    }
    log(`building the Temporal CLI from source into ${binDir}; a one-time build of a few minutes`);
    for (const version of CLI_VERSIONS) {
      log(`go install ${CLI_MODULE}@${version}`);
      // From the temp dir, so no go.mod or go.work around the caller's directory takes part.
      const result = spawnSync('go', ['install', `${CLI_MODULE}@${version}`], {
        cwd: buildDir,
        env: goEnv,
        stdio: ['ignore', 2, 2],
      });
      if (result.status !== 0) {
        log(`building ${version} failed; trying the next version`);
        continue;
      }
      const built = path.join(buildDir, 'bin', BINARY_NAME);
      if (spawnSync(built, ['--version'], { stdio: ['ignore', 2, 2] }).status !== 0) {
        throw new Error(`the freshly built binary does not run: ${built}`);
      }
      fs.renameSync(built, target);
      log(`installed Temporal CLI ${version} at ${target}`);
      return target;
    }
    throw new Error(
      `could not build the Temporal CLI (tried ${CLI_VERSIONS.join(', ')}); see the go output above.\n` +
        '  Alternatively install the Temporal CLI yourself and set TEMPORAL_CLI_PATH=/path/to/temporal.',
    );
  } finally {
    fs.rmSync(buildDir, { recursive: true, force: true });
    release();
  }
}

/** An atomic mkdir lock holding the owner's pid; a lock whose owner is gone is taken over. */
async function takeLock(lockDir, log) {
  const deadline = Date.now() + LOCK_WAIT_MS;
  let told = false;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(path.join(lockDir, 'pid'), `${process.pid}\n`);
      return () => fs.rmSync(lockDir, { recursive: true, force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    const owner = Number(readQuietly(path.join(lockDir, 'pid')));
    if (Number.isInteger(owner) && owner > 0 && !isAlive(owner)) {
      fs.rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!told) log(`another process is building the temporal CLI; waiting for it (lock ${lockDir})`);
    told = true;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for the build lock ${lockDir} (remove it if stale)`);
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

function readQuietly(file) {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

function describeError(err) {
  const cause = err?.cause ? `: ${err.cause.code || err.cause.message || err.cause}` : '';
  return `${err?.message || err}${cause}`;
}

async function main() {
  const log = (line) => process.stderr.write(`ensure-temporal: ${line}\n`);
  try {
    const result = await ensureTemporal({ env: process.env, log, ...realBoundaries(process.env, log) });
    process.stdout.write(`${result.path}\n`);
  } catch (err) {
    log(`error: ${err.message}`);
    process.exitCode = 1;
  }
}

module.exports = { ensureTemporal, goalrunCacheDir, sdkCachedPath, SOURCE_NAMES, CLI_VERSIONS };

if (require.main === module) void main();
