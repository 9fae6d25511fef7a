#!/usr/bin/env node
'use strict';
/**
 * Builds an earlier release of goalrun once and prints the directory of its build on stdout (logs go
 * to stderr): `node scripts/release-build.js cdc5304`. The upgrade test (npm run test:upgrade) runs
 * that release's workers. Plain CommonJS: it needs nothing but Node, git and npm.
 *
 * The build is cached by commit outside the repo, in
 * ${GOALRUN_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/goalrun}/releases/<full commit>, so a warm machine
 * skips it. The sources come from this repo's own git objects (`git archive`, no network, no worktree
 * registered in the repo). Dependencies: when every package the release's lockfile names is installed
 * here at the same version and integrity, node_modules is hard-linked from this checkout (seconds);
 * otherwise the release gets its own `npm ci`. Then its own `npm run build`. The directory appears
 * under its final name only once the build succeeded, and a lock keeps two runs from building at once.
 */
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const REPO = path.resolve(__dirname, '..');
/** How long a second process waits for the first one's build. */
const LOCK_WAIT_MS = 20 * 60_000;
const LOCK_POLL_MS = 2_000;
/** A lock older than this was left by a process that died. */
const STALE_LOCK_MS = 30 * 60_000;
/** The file a finished build leaves in its directory. */
const READY_FILE = '.goalrun-release-build.json';

function log(message) {
  process.stderr.write(`release-build: ${message}\n`);
}

function cacheRoot(env) {
  if (env.GOALRUN_CACHE_DIR) return path.resolve(env.GOALRUN_CACHE_DIR);
  return path.join(env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), '.cache'), 'goalrun');
}

function git(args) {
  return execFileSync('git', ['-C', REPO, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

function run(command, args, cwd) {
  log(`${command} ${args.join(' ')} (in ${cwd})`);
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', process.stderr, process.stderr] });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status})`);
}

/** The full commit of a revision; a shallow clone fetches it first. */
function resolveCommit(revision) {
  try {
    return git(['rev-parse', '--verify', `${revision}^{commit}`]);
  } catch {
    log(`${revision} is not in this clone; fetching it from origin`);
    execFileSync('git', ['-C', REPO, 'fetch', '--quiet', 'origin', revision], { stdio: 'inherit' });
    return git(['rev-parse', '--verify', 'FETCH_HEAD^{commit}']);
  }
}

/** `packages` of a package-lock.json (lockfile v2/v3), keyed by install path. */
function lockedPackages(lockText) {
  return JSON.parse(lockText).packages ?? {};
}

/**
 * Whether this checkout's node_modules can stand in for the release's `npm ci`: this checkout was
 * installed from its lockfile, and every package the release locks is locked here at the same path,
 * version and integrity. Packages only this checkout has are never imported by the release's code.
 */
function canShareNodeModules(releaseLock) {
  const ownLockFile = path.join(REPO, 'package-lock.json');
  if (!fs.existsSync(path.join(REPO, 'node_modules')) || !fs.existsSync(ownLockFile)) return false;
  const own = lockedPackages(fs.readFileSync(ownLockFile, 'utf8'));
  const release = lockedPackages(releaseLock);
  for (const [where, pkg] of Object.entries(release)) {
    if (where === '') continue;
    const mine = own[where];
    if (!mine || mine.version !== pkg.version || mine.integrity !== pkg.integrity) {
      log(`dependencies differ at ${where} (${pkg.version} there, ${mine ? mine.version : 'absent'} here)`);
      return false;
    }
  }
  return true;
}

function acquireLock(lockDir) {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      return;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const age = Date.now() - fs.statSync(lockDir).mtimeMs;
      if (age > STALE_LOCK_MS) {
        log(`removing a stale lock (${Math.round(age / 1000)} s old)`);
        fs.rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`another build holds ${lockDir}`);
      spawnSync('sleep', [String(LOCK_POLL_MS / 1000)]);
    }
  }
}

function buildRelease(commit, target) {
  const work = `${target}.building-${process.pid}`;
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  const started = Date.now();
  log(`unpacking ${commit.slice(0, 12)} from ${REPO}`);
  const archive = spawnSync('git', ['-C', REPO, 'archive', '--format=tar', commit], {
    maxBuffer: 1 << 30,
  });
  if (archive.status !== 0) throw new Error(`git archive ${commit} failed: ${archive.stderr}`);
  const untar = spawnSync('tar', ['-x', '-C', work], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr}`);

  const releaseLock = fs.readFileSync(path.join(work, 'package-lock.json'), 'utf8');
  let dependencies;
  // GOALRUN_RELEASE_BUILD_NPM_CI=1 always installs the release's own dependencies.
  if (process.env.GOALRUN_RELEASE_BUILD_NPM_CI !== '1' && canShareNodeModules(releaseLock)) {
    log('its lockfile is a subset of this checkout: hard-linking node_modules');
    run('cp', ['-al', path.join(REPO, 'node_modules'), path.join(work, 'node_modules')], REPO);
    dependencies = 'hard-linked';
  } else {
    run('npm', ['ci', '--no-audit', '--no-fund'], work);
    dependencies = 'npm ci';
  }
  run('npm', ['run', 'build'], work);
  const info = {
    commit,
    dependencies,
    builtAt: new Date().toISOString(),
    seconds: (Date.now() - started) / 1000,
  };
  fs.writeFileSync(path.join(work, READY_FILE), `${JSON.stringify(info, null, 2)}\n`);
  fs.rmSync(target, { recursive: true, force: true });
  fs.renameSync(work, target);
  log(`built in ${info.seconds.toFixed(0)} s (${dependencies})`);
}

function main() {
  const revision = process.argv[2];
  if (!revision) {
    process.stderr.write('usage: node scripts/release-build.js <commit or tag>\n');
    process.exit(2);
  }
  const commit = resolveCommit(revision);
  const root = path.join(cacheRoot(process.env), 'releases');
  const target = path.join(root, commit);
  fs.mkdirSync(root, { recursive: true });
  if (!fs.existsSync(path.join(target, READY_FILE))) {
    const lockDir = `${target}.lock`;
    acquireLock(lockDir);
    try {
      if (!fs.existsSync(path.join(target, READY_FILE))) buildRelease(commit, target);
    } finally {
      fs.rmSync(lockDir, { recursive: true, force: true });
    }
  } else {
    log(`cached: ${target}`);
  }
  process.stdout.write(`${target}\n`);
}

try {
  main();
} catch (err) {
  log(`error: ${err.message}`);
  process.exit(1);
}
