#!/usr/bin/env node
/**
 * bench-step-overhead: what one goal step costs on Temporal, next to the bare minimum Temporal needs.
 *
 * Run (needs the compiled dist/, the `temporal` binary and a PostgreSQL server):
 *
 *   npm run build && node scripts/bench-step-overhead.js [--steps 30] [--repeat 3] [--tool bash|file-read]
 *
 * It starts its own headless Temporal dev server on a free loopback port and creates a throwaway
 * database `goalrun_bench_<random>` on the server of $DATABASE_URL (default
 * postgres://root@127.0.0.1:5432/test); both are removed at the end, also after an error or Ctrl-C.
 * Then, after one unreported warm-up run of each:
 *
 *   (a) goal: a `scripted:` goal of N model steps (each step one cheap tool call, the last one `finish`),
 *       run by the real goal worker (createGoalWorker) against the PostgreSQL store;
 *   (b) baseline: a workflow that runs 2·N no-op activities one after another (N model steps + N tool
 *       calls), on a plain Worker with the goal worker's settings.
 *
 * Each is repeated --repeat times and the median is printed: goal ms per step, baseline ms per
 * activity and per step (2 activities), their ratio, and the goal's history size (events, bytes,
 * bytes per step, largest payload, activities by type). It prints figures and asserts nothing,
 * except that each goal completed with the expected step count (else the figures would be meaningless).
 *
 * Plain CommonJS JavaScript over dist/ on purpose: scripts/ is not part of the TypeScript build and
 * the repo has no TS runner (tsx, ts-node).
 */
'use strict';

const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const { createServer } = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { parseArgs } = require('node:util');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const LOOPBACK = '127.0.0.1';
const NAMESPACE = 'default';
const ADMIN_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const SERVER_STARTUP_TIMEOUT_MS = 30_000;
const SERVER_STOP_GRACE_MS = 5_000;
// Another process can take the free port between our probe and the server's bind; retry with another.
const SERVER_START_ATTEMPTS = 3;
// Goal limits from the brief: generous, so that only `finish` ends the goal.
const LIMITS = { maxIterations: 50, maxSteps: 1000, maxMinutes: 60, noProgressLimit: 3 };
// Fixed usage per scripted turn, so the scripted model does not re-serialize the transcript to guess it.
const SCRIPTED_USAGE = { input: 1000, output: 50 };
const WARMUP_STEPS = 3;

/** Loads a compiled module, with a hint when the build has not been run. */
function fromDist(relative) {
  const file = path.join(DIST, relative);
  if (!fs.existsSync(file)) {
    throw new Error(`${path.relative(ROOT, file)} is missing: run \`npm run build\` first`);
  }
  return require(file);
}

function options() {
  const { values } = parseArgs({
    options: {
      steps: { type: 'string', default: '30' },
      repeat: { type: 'string', default: '3' },
      tool: { type: 'string', default: 'bash' },
    },
  });
  const steps = Number(values.steps);
  const repeat = Number(values.repeat);
  if (!Number.isInteger(steps) || steps < 2) throw new Error('--steps must be an integer >= 2');
  if (!Number.isInteger(repeat) || repeat < 1) throw new Error('--repeat must be an integer >= 1');
  if (values.tool !== 'bash' && values.tool !== 'file-read')
    throw new Error('--tool must be bash or file-read');
  return { steps, repeat, tool: values.tool };
}

// ---------------------------------------------------------------------------------------------------
// Cleanup: a stack of undo steps, run once, in reverse, whether main succeeds, throws or is interrupted.

const undo = [];
let cleaning = null;

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

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------------
// Temporal dev server (same recipe as test/support/temporal-server.ts, which is not compiled).

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

async function startTemporalServer() {
  const { requireTemporalBinary } = fromDist('cli/temporal-binary.js');
  const binary = requireTemporalBinary();
  let lastError;
  for (let attempt = 1; attempt <= SERVER_START_ATTEMPTS; attempt++) {
    try {
      return await startServerOnce(binary);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function startServerOnce(binary) {
  const { devServerArgs, isTemporalReachable } = fromDist('cli/dev-server.js');
  const port = await findFreePort();
  const address = `${LOOPBACK}:${port}`;
  // devServerArgs adds goalrun's search attributes (GoalStatus, GoalSession, GoalModel, GoalIteration).
  const args = devServerArgs({ port, ip: LOOPBACK, headless: true });
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
      return { address, port, stop, startupMs: performance.now() - started };
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

async function createDatabase() {
  // Hex only, so the name needs no quoting.
  const name = `goalrun_bench_${randomBytes(4).toString('hex')}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    // FORCE: a pool connection the store failed to close must not keep the database alive.
    drop: () => withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

// ---------------------------------------------------------------------------------------------------
// Workloads.

/** A scripted model file: steps-1 turns of one cheap tool call, then `finish`. */
function writeScript(dir, steps, tool) {
  const call =
    tool === 'bash'
      ? { name: 'bash', args: { command: 'true' } }
      : { name: 'file-read', args: { path: 'note.txt' } };
  const turns = Array.from({ length: steps - 1 }, () => ({ toolCalls: [call], usage: SCRIPTED_USAGE }));
  turns.push({
    toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'benchmark done' } }],
    usage: SCRIPTED_USAGE,
  });
  const file = path.join(dir, `turns-${steps}.json`);
  fs.writeFileSync(file, JSON.stringify({ turns }));
  return { file, toolCalls: turns.length };
}

let runCounter = 0;

/** Runs one scripted goal the way `goalrun start` starts it, and returns its time and history. */
async function runGoal(ctx, steps) {
  const { GoalIterationKey, GoalModelKey, GoalSessionKey, GoalStatusKey, workflowIdOf } =
    fromDist('workflows/definitions.js');
  const script = writeScript(ctx.tmp, steps, ctx.tool);
  runCounter += 1;
  const sessionId = `bench-${randomBytes(3).toString('hex')}-${runCounter}`;
  const model = `scripted:${script.file}`;
  const goal = {
    sessionId,
    objective: `benchmark: ${steps} steps of ${ctx.tool}, then finish`,
    workspace: ctx.workspace,
    model,
    limits: LIMITS,
  };
  const started = performance.now();
  const handle = await ctx.client.workflow.start('goalWorkflow', {
    workflowId: workflowIdOf(sessionId),
    taskQueue: ctx.goalQueue,
    args: [{ goal }],
    staticSummary: goal.objective,
    typedSearchAttributes: [
      { key: GoalStatusKey, value: 'running' },
      { key: GoalSessionKey, value: sessionId },
      { key: GoalModelKey, value: model.slice(0, 200) },
      { key: GoalIterationKey, value: 0 },
    ],
  });
  const snapshot = await handle.result();
  const ms = performance.now() - started;
  if (snapshot.status !== 'completed' || snapshot.steps !== steps) {
    throw new Error(
      `goal ${sessionId} ended ${snapshot.status} after ${snapshot.steps} steps (expected completed after ${steps}): ${snapshot.reason}`,
    );
  }
  return { ms, steps, toolCalls: script.toolCalls, history: measureHistory(await handle.fetchHistory()) };
}

/** Runs the baseline workflow with `count` sequential no-op activities. */
async function runBaseline(ctx, count) {
  const started = performance.now();
  const handle = await ctx.client.workflow.start('noopWorkflow', {
    workflowId: `bench-noop-${randomBytes(4).toString('hex')}`,
    taskQueue: ctx.baselineQueue,
    args: [count],
  });
  await handle.result();
  const ms = performance.now() - started;
  return { ms, activities: count, history: measureHistory(await handle.fetchHistory()) };
}

// ---------------------------------------------------------------------------------------------------
// History measurement.

function measureHistory(history) {
  const { temporal } = require('@temporalio/proto');
  const { Payload } = temporal.api.common.v1;
  const eventTypeName = (type) =>
    (temporal.api.enums.v1.EventType[type] ?? String(type)).replace(/^EVENT_TYPE_/, '');
  const bytes = temporal.api.history.v1.History.encode(history).finish().length;
  const activities = {};
  let largest = { bytes: 0, where: 'none' };
  history.events.forEach((event, index) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const name = scheduled.activityType?.name ?? '?';
      activities[name] = (activities[name] ?? 0) + 1;
    }
    forEachPayload(event, '', (payload, where) => {
      const size = Payload.encode(payload).finish().length;
      if (size > largest.bytes) {
        largest = { bytes: size, where: `event ${index + 1} ${eventTypeName(event.eventType)} ${where}` };
      }
    });
  });
  return { events: history.events.length, bytes, activities, largest };
}

/** Calls `visit` for every Payload (an object with binary `data` and `metadata`) under `value`. */
function forEachPayload(value, where, visit) {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return;
  if (ArrayBuffer.isView(value.data) && value.metadata && typeof value.metadata === 'object') {
    visit(value, where);
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    forEachPayload(child, Array.isArray(value) ? `${where}[${key}]` : where ? `${where}.${key}` : key, visit);
  }
}

// ---------------------------------------------------------------------------------------------------
// Output.

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const fmt = (n, digits = 1) => n.toFixed(digits);
const kib = (bytes) => `${bytes} B (${fmt(bytes / 1024)} KiB)`;

function printResults(opts, goals, baselines) {
  const steps = opts.steps;
  const goalMs = median(goals.map((run) => run.ms));
  const goalPerStep = goalMs / steps;
  const activities = baselines[0].activities;
  const baseMs = median(baselines.map((run) => run.ms));
  const basePerActivity = baseMs / activities;
  const basePerStep = basePerActivity * 2;
  const historyEvents = median(goals.map((run) => run.history.events));
  const historyBytes = median(goals.map((run) => run.history.bytes));
  const largest = goals.reduce(
    (best, run) => (run.history.largest.bytes > best.bytes ? run.history.largest : best),
    {
      bytes: 0,
    },
  );
  const runs = (list) => list.map((run) => `${fmt(run.ms, 0)}`).join(', ');

  console.log('');
  console.log(
    `goal: ${steps} model steps, ${goals[0].toolCalls} tool calls (${opts.tool} ×${steps - 1}, finish ×1)`,
  );
  console.log(`  runs (ms)            ${runs(goals)}`);
  console.log(`  total (median)       ${fmt(goalMs, 0)} ms`);
  console.log(`  per step             ${fmt(goalPerStep, 2)} ms`);
  console.log(`baseline: ${activities} sequential no-op activities (= model steps + tool calls)`);
  console.log(`  runs (ms)            ${runs(baselines)}`);
  console.log(`  total (median)       ${fmt(baseMs, 0)} ms`);
  console.log(`  per activity         ${fmt(basePerActivity, 2)} ms`);
  console.log(`  per step (2 act.)    ${fmt(basePerStep, 2)} ms`);
  console.log(`ratio goal/baseline per step: ${fmt(goalPerStep / basePerStep, 2)}×`);
  console.log('goal history (median of runs):');
  console.log(`  events               ${historyEvents} (${fmt(historyEvents / steps, 1)} per step)`);
  console.log(`  bytes                ${kib(historyBytes)}`);
  console.log(`  bytes per step       ${fmt(historyBytes / steps, 0)} B`);
  console.log(`  largest payload      ${largest.bytes} B at ${largest.where}`);
  const byType = Object.entries(goals[0].history.activities)
    .map(([name, count]) => `${name} ×${count}`)
    .join(', ');
  const scheduled = Object.values(goals[0].history.activities).reduce((sum, count) => sum + count, 0);
  console.log(`  activities scheduled ${scheduled}: ${byType}`);
  const baseHistory = baselines[0].history;
  console.log(
    `baseline history: ${baseHistory.events} events, ${kib(baseHistory.bytes)}, ${fmt(baseHistory.bytes / steps, 0)} B per step`,
  );
}

// ---------------------------------------------------------------------------------------------------

async function main() {
  const opts = options();
  const totalStarted = performance.now();
  // Compiled modules first: a missing build should fail before anything is started.
  const {
    createGoalWorker,
    installWorkerLogging,
    MAX_CACHED_WORKFLOWS,
    MAX_CONCURRENT_ACTIVITIES,
    SHUTDOWN_GRACE_TIME,
  } = fromDist('worker/worker.js');
  const { openStore } = fromDist('store/open.js');
  const { Client, Connection } = require('@temporalio/client');
  const { NativeConnection, Worker } = require('@temporalio/worker');
  // The SDK logs every worker start and stop at INFO; only problems matter here.
  installWorkerLogging({ level: 'WARN' });

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-bench-'));
  undo.push({ name: 'remove temp dir', run: () => fs.rmSync(tmp, { recursive: true, force: true }) });
  const workspace = path.join(tmp, 'workspace');
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(workspace, 'note.txt'), 'a small file for file-read\n');

  const server = await startTemporalServer();
  undo.push({ name: 'stop temporal dev server', run: server.stop });
  const db = await createDatabase();
  undo.push({ name: `drop database ${db.name}`, run: db.drop });
  console.log(
    `temporal dev server ${server.address} (up in ${fmt(server.startupMs, 0)} ms), database ${db.name}, ` +
      `steps=${opts.steps}, tool=${opts.tool}, repeat=${opts.repeat} (medians), node ${process.version}`,
  );

  const store = await openStore({ databaseUrl: db.url, home: tmp });
  undo.push({ name: 'close store', run: () => store.close() });
  const workerConnection = await NativeConnection.connect({ address: server.address });
  undo.push({ name: 'close worker connection', run: () => workerConnection.close() });
  const clientConnection = await Connection.connect({ address: server.address });
  undo.push({ name: 'close client connection', run: () => clientConnection.close() });
  const client = new Client({ connection: clientConnection, namespace: NAMESPACE });

  const suffix = randomBytes(4).toString('hex');
  const goalQueue = `bench-goal-${suffix}`;
  const baselineQueue = `bench-noop-${suffix}`;
  const goalWorker = await createGoalWorker({
    connection: workerConnection,
    namespace: NAMESPACE,
    taskQueue: goalQueue,
    store,
    providerEnv: {},
  });
  const baselineWorker = await Worker.create({
    connection: workerConnection,
    namespace: NAMESPACE,
    taskQueue: baselineQueue,
    workflowsPath: require.resolve('./bench/noop-workflow.js'),
    activities: { noop: async () => {} },
    // The goal worker's settings, so only the work per activity differs.
    shutdownGraceTime: SHUTDOWN_GRACE_TIME,
    maxCachedWorkflows: MAX_CACHED_WORKFLOWS,
    maxConcurrentActivityTaskExecutions: MAX_CONCURRENT_ACTIVITIES,
  });
  for (const [name, worker] of [
    ['goal', goalWorker],
    ['baseline', baselineWorker],
  ]) {
    const running = worker.run();
    // Pushed after the connections, so workers stop before their connection closes.
    undo.push({
      name: `stop ${name} worker`,
      run: async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
      },
    });
    // A worker that dies mid-run would otherwise leave the benchmark waiting on a result forever.
    running.catch((error) => {
      console.error(`${name} worker failed: ${error.message}`);
      cleanup().finally(() => process.exit(1));
    });
  }

  const ctx = { client, tmp, workspace, tool: opts.tool, goalQueue, baselineQueue };
  // Warm-up: the first workflow task loads the bundle into the worker and the first queries open pools.
  await runGoal(ctx, WARMUP_STEPS);
  await runBaseline(ctx, 2 * WARMUP_STEPS);

  const goals = [];
  const baselines = [];
  for (let i = 0; i < opts.repeat; i++) {
    // Interleaved, so a slow patch of the machine hurts both sides alike.
    goals.push(await runGoal(ctx, opts.steps));
    baselines.push(await runBaseline(ctx, goals[0].steps + goals[0].toolCalls));
  }
  printResults(opts, goals, baselines);
  console.log(`\nbenchmark took ${fmt((performance.now() - totalStarted) / 1000)} s (cleanup follows)`);
}

main()
  .then(cleanup, async (error) => {
    console.error(`benchmark failed: ${error.stack ?? error}`);
    await cleanup();
    process.exitCode = 1;
  })
  .then(() => {
    // Native handles (the SDK runtime) can keep the event loop alive after everything is closed.
    process.exit();
  });
