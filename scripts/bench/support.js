/**
 * What the benchmarks share: compiled modules from dist/, an undo stack run on exit or Ctrl-C, a
 * throwaway Temporal dev server and PostgreSQL database, and statistics (history: ./history.js).
 *
 * Plain CommonJS over dist/ on purpose: scripts/ is not part of the TypeScript build and the repo
 * has no TS runner.
 */
'use strict';

const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const { createServer } = require('node:net');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { UsageError, exitWithUsage } = require('./args');

const ROOT = path.resolve(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');
const LOOPBACK = '127.0.0.1';
const ADMIN_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const SERVER_STARTUP_TIMEOUT_MS = 30_000;
const SERVER_STOP_GRACE_MS = 5_000;
// Another process can take the free port between our probe and the server's bind; retry with another.
const SERVER_START_ATTEMPTS = 3;

/** Loads a compiled module, with a hint when the build has not been run. */
function fromDist(relative) {
  const file = path.join(DIST, relative);
  if (!fs.existsSync(file)) {
    throw new Error(`${path.relative(ROOT, file)} is missing: run \`npm run build\` first`);
  }
  return require(file);
}

// ---------------------------------------------------------------------------------------------------
// Cleanup: a stack of undo steps, run once, in reverse, whether main succeeds, throws or is interrupted.

const undo = [];
let cleaning = null;

/** Registers an undo step (run in reverse order of registration). */
function onCleanup(name, run) {
  undo.push({ name, run });
}

/** Runs every undo step once. */
function cleanup() {
  cleaning ??= (async () => {
    while (undo.length > 0) {
      const { name, run } = undo.pop();
      try {
        await run();
      } catch (error) {
        console.error(`cleanup: ${name} failed: ${error.message}`);
      }
    }
  })();
  return cleaning;
}

/** Runs `main` with cleanup on success, failure and Ctrl-C; exits when done (native handles linger). */
function runMain(main) {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      console.error(`\n${signal}: cleaning up`);
      cleanup().finally(() => process.exit(130));
    });
  }
  main()
    .then(cleanup, async (error) => {
      // A wrong option or value was found before anything started: its message says it all.
      if (error instanceof UsageError) exitWithUsage(require.main?.filename ?? 'benchmark', error.message);
      console.error(`benchmark failed: ${error.stack ?? error}`);
      await cleanup();
      process.exitCode = 1;
    })
    .then(() => process.exit());
}

// ---------------------------------------------------------------------------------------------------
// Temporal dev server.

function findFreePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a headless dev server on a free loopback port (its HTTP API on another, `httpAddress`),
 * stopped at cleanup. `tuned: false` gives
 * the server's own defaults instead of goalrun's (GOALRUN_DEV_DYNAMIC_CONFIG); `dbFile` persists to
 * SQLite as `goalrun dev` does (in memory otherwise).
 */
async function startTemporalServer({ tuned = true, dynamicConfig, dbFile } = {}) {
  const { requireTemporalBinary } = fromDist('cli/temporal-binary.js');
  const binary = requireTemporalBinary();
  let lastError;
  for (let attempt = 1; attempt <= SERVER_START_ATTEMPTS; attempt++) {
    try {
      const server = await startServerOnce(binary, { tuned, dynamicConfig, dbFile });
      onCleanup(`stop temporal dev server ${server.address}`, server.stop);
      return server;
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function startServerOnce(binary, { tuned, dynamicConfig, dbFile }) {
  const { devServerArgs, isTemporalReachable } = fromDist('cli/dev-server.js');
  const port = await findFreePort();
  const address = `${LOOPBACK}:${port}`;
  let httpPort = await findFreePort();
  while (httpPort === port) httpPort = await findFreePort();
  const args = devServerArgs({
    port,
    httpPort,
    ip: LOOPBACK,
    headless: true,
    serverDefaults: !tuned,
    dynamicConfig,
    dbFile,
  });
  const started = performance.now();
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // Drain the pipes (a full pipe blocks the server) and keep a tail for error messages.
  const tail = [];
  const collect = (chunk) => {
    tail.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - 30));
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise((resolve) => {
    child.once('exit', resolve);
    child.once('error', resolve);
  });
  // If this process dies without cleanup, do not leave a server behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), SERVER_STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
  };
  let spawnError;
  child.once('error', (error) => {
    spawnError = error;
  });
  const deadline = Date.now() + SERVER_STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (spawnError) throw new Error(`could not run ${binary}: ${spawnError.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`temporal dev server exited during startup:\n${tail.join('\n')}`);
    }
    if (await isTemporalReachable(address, 1_000)) {
      const httpAddress = `${LOOPBACK}:${httpPort}`;
      return {
        address,
        httpAddress,
        port,
        pid: child.pid,
        stop,
        startupMs: performance.now() - started,
        args,
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`temporal dev server did not answer at ${address} in time:\n${tail.join('\n')}`);
}

// ---------------------------------------------------------------------------------------------------
// Throwaway PostgreSQL database.

async function withAdmin(fn) {
  const pg = require('pg');
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

/** Creates `goalrun_bench_<random>` on $DATABASE_URL's server; dropped at cleanup. */
async function createDatabase() {
  // Hex only, so the name needs no quoting.
  const name = `goalrun_bench_${randomBytes(4).toString('hex')}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  // FORCE: a pool connection the store failed to close must not keep the database alive.
  onCleanup(`drop database ${name}`, () =>
    withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  );
  return { name, url: url.toString() };
}

// ---------------------------------------------------------------------------------------------------
// Statistics and formatting.

/** The q-quantile (0..1) of a list, by nearest rank. */
function quantile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** The median (the mean of the middle two for an even count). */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** `median (min–max)`, for figures from repeated runs. */
function spread(values, digits = 1) {
  return `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)})`;
}

const fmt = (n, digits = 1) => n.toFixed(digits);
const kib = (bytes) => `${bytes} B (${fmt(bytes / 1024)} KiB)`;

module.exports = {
  ROOT,
  DIST,
  LOOPBACK,
  fromDist,
  onCleanup,
  cleanup,
  runMain,
  findFreePort,
  startTemporalServer,
  createDatabase,
  quantile,
  median,
  spread,
  fmt,
  kib,
};
