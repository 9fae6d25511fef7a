#!/usr/bin/env node
/**
 * bench-step-overhead: what one goal step costs on Temporal, next to the bare minimum Temporal needs.
 *
 *   npm run bench -- [--steps 30] [--repeat 3] [--tool bash|file-read] [--server goalrun|default]
 *   npm run bench -- --concurrent 50     (many goals at once: scripts/bench-concurrency.js)
 *
 * Needs the compiled dist/, the `temporal` binary and a PostgreSQL server. It starts its own headless
 * Temporal dev server on a free loopback port (with goalrun's dynamic config, GOALRUN_DEV_DYNAMIC_CONFIG,
 * or with `--server default` the server's own defaults) and a throwaway database
 * `goalrun_bench_<random>` on the server of $DATABASE_URL (default postgres://root@127.0.0.1:5432/test);
 * both are removed at the end, also after an error or Ctrl-C. Then, after one unreported warm-up run
 * of each:
 *
 *   (a) goal: a `scripted:` goal of N model steps (each step one cheap tool call, the last one `finish`),
 *       run by the real goal worker (createGoalWorker) against the PostgreSQL store;
 *   (b) baseline (the floor): a workflow that runs 2·N no-op activities one after another (N model
 *       steps + N tool calls), on a plain Worker with the goal worker's tuning.
 *
 * Each is repeated --repeat times, interleaved, and the median is printed with the range: goal ms
 * per step, baseline ms per activity and per step (2 activities), their ratio per run, and the
 * goal's history (events and payload bytes per step, largest payload, activities by type). It
 * asserts nothing, except that each goal completed with the expected step count.
 */
'use strict';

const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { benchArgs, usageError } = require('./bench/args');
const {
  createDatabase,
  fmt,
  fromDist,
  kib,
  median,
  onCleanup,
  runMain,
  spread,
  startTemporalServer,
} = require('./bench/support');
const { CHEAP_TOOLS, cheapCall, writeNotes } = require('./bench/cheap-calls');
const { measureHistory } = require('./bench/history');

const NAMESPACE = 'default';
// Generous limits, so that only `finish` ends the goal.
const LIMITS = { maxIterations: 50, maxSteps: 1000, maxMinutes: 60, noProgressLimit: 3 };
// Fixed usage per scripted turn, so the scripted model does not re-serialize the transcript to guess it.
const SCRIPTED_USAGE = { input: 1000, output: 50 };
const WARMUP_STEPS = 3;

function options() {
  const { values } = benchArgs(__filename, {
    options: {
      steps: { type: 'string', default: '30' },
      repeat: { type: 'string', default: '3' },
      tool: { type: 'string', default: 'bash' },
      server: { type: 'string', default: 'goalrun' },
    },
  });
  const steps = Number(values.steps);
  const repeat = Number(values.repeat);
  if (!Number.isInteger(steps) || steps < 2) throw usageError('--steps must be an integer >= 2');
  if (!Number.isInteger(repeat) || repeat < 1) throw usageError('--repeat must be an integer >= 1');
  if (!CHEAP_TOOLS.includes(values.tool)) throw usageError(`--tool must be one of ${CHEAP_TOOLS.join(', ')}`);
  if (values.server !== 'goalrun' && values.server !== 'default')
    throw usageError('--server must be goalrun or default');
  return { steps, repeat, tool: values.tool, server: values.server };
}

/** A scripted model file: steps-1 turns of one cheap tool call (a different one each step), then `finish`. */
function writeScript(dir, steps, tool) {
  const turns = Array.from({ length: steps - 1 }, (_, i) => ({
    toolCalls: [cheapCall(tool, i + 1)],
    usage: SCRIPTED_USAGE,
  }));
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
  const snapshot = await fromDist('cli/goal-result.js').goalResult(handle);
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

function printResults(opts, goals, baselines) {
  const steps = opts.steps;
  const activities = baselines[0].activities;
  const goalPerStep = goals.map((run) => run.ms / steps);
  const basePerActivity = baselines.map((run) => run.ms / activities);
  const basePerStep = basePerActivity.map((ms) => ms * 2);
  const ratios = goalPerStep.map((ms, i) => ms / basePerStep[i]);
  const runs = (list) => list.map((run) => fmt(run.ms, 0)).join(', ');

  console.log('');
  console.log(`server: ${opts.server === 'goalrun' ? "goalrun's dynamic config" : 'Temporal defaults'}`);
  console.log(
    `goal: ${steps} model steps, ${goals[0].toolCalls} tool calls (${opts.tool} ×${steps - 1}, finish ×1)`,
  );
  console.log(`  runs (ms)              ${runs(goals)}`);
  console.log(`  per step (ms)          ${spread(goalPerStep)}   median (min–max)`);
  console.log(`baseline: ${activities} sequential no-op activities (= model steps + tool calls)`);
  console.log(`  runs (ms)              ${runs(baselines)}`);
  console.log(`  per activity (ms)      ${spread(basePerActivity)}`);
  console.log(`  per step, 2 act. (ms)  ${spread(basePerStep)}`);
  console.log(
    `ratio goal/baseline per step, each run against the baseline run next to it: ${spread(ratios, 2)}×`,
  );

  const history = goals[goals.length - 1].history;
  const perStep = history.perStep.slice(1); // the first step also carries the session's opening
  const events = perStep.map((step) => step.events);
  const payload = perStep.map((step) => step.payloadBytes);
  console.log('goal history (last run):');
  console.log(
    `  events                 ${history.events} (${fmt(history.events / steps, 1)} per step overall)`,
  );
  console.log(`  encoded bytes          ${kib(history.bytes)}, ${fmt(history.bytes / steps, 0)} B per step`);
  console.log(
    `  per step, model step to model step (steps 2..${steps - 1}): events ${median(events)} (max ${Math.max(...events)}), ` +
      `payload ${median(payload)} B (max ${Math.max(...payload)} B); step 1: ${history.perStep[0].events} events, ${history.perStep[0].payloadBytes} B`,
  );
  console.log(`  largest payload        ${history.largest.bytes} B at ${history.largest.where}`);
  const byType = Object.entries(history.activities)
    .map(([name, count]) => `${name} ×${count}`)
    .join(', ');
  const scheduled = Object.values(history.activities).reduce((sum, count) => sum + count, 0);
  console.log(`  activities scheduled   ${scheduled}: ${byType}`);
  console.log('where a step goes (median ms per phase, from event times; goal | baseline):');
  const baselinePhases = baselines[baselines.length - 1].history.phases;
  for (const [phase, ms] of Object.entries(history.phases)) {
    const base = baselinePhases[phase.replace(/^(modelStep|runTool)/, 'noop')];
    console.log(
      `  ${phase.padEnd(40)} ${fmt(ms, 1).padStart(6)}${base === undefined ? '' : ` | ${fmt(base, 1)}`}`,
    );
  }
  const baseHistory = baselines[0].history;
  console.log(
    `baseline history: ${baseHistory.events} events (${fmt(baseHistory.events / steps, 1)} per 2 activities), ${kib(baseHistory.bytes)}`,
  );
}

async function main() {
  const opts = options();
  const totalStarted = performance.now();
  // Compiled modules first: a missing build should fail before anything is started.
  const { createGoalWorker, installWorkerLogging, workerTuning } = fromDist('worker/worker.js');
  const { openStore } = fromDist('store/open.js');
  const { Client, Connection } = require('@temporalio/client');
  const { NativeConnection, Worker } = require('@temporalio/worker');
  // The SDK logs every worker start and stop at INFO; only problems matter here.
  installWorkerLogging({ level: 'warn' });

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-bench-'));
  onCleanup('remove temp dir', () => fs.rmSync(tmp, { recursive: true, force: true }));
  const workspace = path.join(tmp, 'workspace');
  fs.mkdirSync(workspace);
  writeNotes(workspace, Math.max(opts.steps, WARMUP_STEPS));

  const server = await startTemporalServer({ tuned: opts.server === 'goalrun' });
  const db = await createDatabase();
  console.log(
    `temporal dev server ${server.address} (up in ${fmt(server.startupMs, 0)} ms, ${opts.server} config), database ${db.name}, ` +
      `steps=${opts.steps}, tool=${opts.tool}, repeat=${opts.repeat}, node ${process.version}`,
  );

  const store = await openStore({ databaseUrl: db.url, home: tmp });
  onCleanup('close store', () => store.close());
  const workerConnection = await NativeConnection.connect({ address: server.address });
  onCleanup('close worker connection', () => workerConnection.close());
  const clientConnection = await Connection.connect({ address: server.address });
  onCleanup('close client connection', () => clientConnection.close());
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
    // The goal worker's tuning, so only the work per activity differs.
    ...workerTuning(),
  });
  for (const [name, worker] of [
    ['goal', goalWorker],
    ['baseline', baselineWorker],
  ]) {
    const running = worker.run();
    // Registered after the connections, so workers stop before their connection closes.
    onCleanup(`stop ${name} worker`, async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    // A worker that dies mid-run would otherwise leave the benchmark waiting on a result forever.
    running.catch((error) => {
      console.error(`${name} worker failed: ${error.message}`);
      process.kill(process.pid, 'SIGTERM');
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

if (process.argv.some((arg) => arg === '--concurrent' || arg.startsWith('--concurrent='))) {
  // `npm run bench -- --concurrent N` runs the concurrency benchmark with the same arguments.
  require('./bench-concurrency.js');
} else {
  runMain(main);
}
