#!/usr/bin/env node
/**
 * bench-floor: what one sequential no-op activity costs on the dev server under different server
 * settings — the floor every goal step stands on (a step is two activities).
 *
 *   npm run build && node scripts/bench-floor.js [--activities 60] [--repeat 5] [--only name,name]
 *
 * For each configuration below it starts its own headless dev server (in memory, or on a SQLite
 * file as `goalrun dev` runs it), runs one warm-up workflow, then --repeat workflows of --activities
 * sequential no-op activities, and prints ms per activity as median (min–max). Configurations run
 * round-robin, one workflow each per round, so a slow patch of the machine hurts all of them alike.
 * It asserts nothing.
 */
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { benchArgs, usageError } = require('./bench/args');
const { fmt, fromDist, onCleanup, runMain, spread, startTemporalServer } = require('./bench/support');

const EAGER = { 'system.enableActivityEagerExecution': true };
const TRANSFER = { 'history.transferProcessorMaxPollRPS': 1000 };

/** The configurations compared: Temporal's defaults, each of goalrun's settings alone, and all of them. */
const CONFIGS = [
  { name: 'default', tuned: false },
  { name: 'eager', tuned: false, dynamicConfig: EAGER },
  { name: 'transfer-rps', tuned: false, dynamicConfig: TRANSFER },
  {
    name: 'transfer-rps-200',
    tuned: false,
    dynamicConfig: { ...EAGER, 'history.transferProcessorMaxPollRPS': 200 },
  },
  { name: 'goalrun', tuned: true },
  {
    name: 'goalrun+1-partition',
    tuned: true,
    dynamicConfig: {
      'matching.numTaskqueueReadPartitions': 1,
      'matching.numTaskqueueWritePartitions': 1,
    },
  },
  { name: 'default-sqlite-file', tuned: false, file: true },
  { name: 'goalrun-sqlite-no-wal', tuned: false, dynamicConfig: { ...EAGER, ...TRANSFER }, file: true },
  { name: 'goalrun-sqlite-file', tuned: true, file: true },
];

function options() {
  const { values } = benchArgs(__filename, {
    options: {
      activities: { type: 'string', default: '60' },
      repeat: { type: 'string', default: '5' },
      only: { type: 'string' },
    },
  });
  const activities = Number(values.activities);
  const repeat = Number(values.repeat);
  if (!Number.isInteger(activities) || activities < 1)
    throw usageError('--activities must be a positive integer');
  if (!Number.isInteger(repeat) || repeat < 1) throw usageError('--repeat must be a positive integer');
  const only = values.only?.split(',');
  const configs = only ? CONFIGS.filter((config) => only.includes(config.name)) : CONFIGS;
  if (configs.length === 0)
    throw usageError(`--only names none of: ${CONFIGS.map((c) => c.name).join(', ')}`);
  return { activities, repeat, configs };
}

async function main() {
  const opts = options();
  const { installWorkerLogging, workerTuning } = fromDist('worker/worker.js');
  const { Client, Connection } = require('@temporalio/client');
  const { NativeConnection, Worker } = require('@temporalio/worker');
  installWorkerLogging({ level: 'warn' });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-floor-'));
  onCleanup('remove temp dir', () => fs.rmSync(tmp, { recursive: true, force: true }));

  const setups = [];
  for (const config of opts.configs) {
    const dbFile = config.file ? path.join(tmp, `${config.name}.db`) : undefined;
    const server = await startTemporalServer({
      tuned: config.tuned,
      dynamicConfig: config.dynamicConfig,
      dbFile,
    });
    const workerConnection = await NativeConnection.connect({ address: server.address });
    onCleanup(`close worker connection ${config.name}`, () => workerConnection.close());
    const clientConnection = await Connection.connect({ address: server.address });
    onCleanup(`close client connection ${config.name}`, () => clientConnection.close());
    const worker = await Worker.create({
      connection: workerConnection,
      taskQueue: 'floor',
      workflowsPath: require.resolve('./bench/noop-workflow.js'),
      activities: { noop: async () => {} },
      ...workerTuning(),
    });
    const running = worker.run();
    onCleanup(`stop worker ${config.name}`, async () => {
      worker.shutdown();
      await running;
    });
    const client = new Client({ connection: clientConnection });
    const run = async (count) => {
      const started = performance.now();
      await client.workflow.execute('noopWorkflow', {
        workflowId: `floor-${Math.random().toString(16).slice(2)}`,
        taskQueue: 'floor',
        args: [count],
      });
      return (performance.now() - started) / count;
    };
    await run(5);
    setups.push({ config, run, perActivity: [] });
  }
  console.log(
    `${opts.configs.length} dev servers; ${opts.activities} sequential no-op activities per workflow, ${opts.repeat} rounds, node ${process.version}`,
  );
  for (let round = 0; round < opts.repeat; round++) {
    for (const setup of setups) setup.perActivity.push(await setup.run(opts.activities));
  }
  console.log('\nms per activity, median (min–max); a goal step is two of them');
  const defaultMedian = setups.find((s) => s.config.name === 'default')?.perActivity;
  for (const { config, perActivity } of setups) {
    const vsDefault = defaultMedian
      ? `  ${fmt(median(defaultMedian) / median(perActivity), 1)}× faster than default`
      : '';
    console.log(`  ${config.name.padEnd(22)} ${spread(perActivity).padEnd(22)}${vsDefault}`);
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

runMain(main);
