#!/usr/bin/env node
/**
 * A worker process for the floor workflows of scripts/bench-concurrency.js, with goalrun's worker
 * tuning (workerTuning(): the cache sized the same way), so only the work per activity differs from the goal worker.
 *
 *   node scripts/bench/floor-worker.js <temporal address> <task queue> [<model url> <database url> <workspace>]
 *
 * With the last three it also runs the I/O floor's activities (scripts/bench/floor-io-activities.js).
 */
'use strict';

const { setTimeout: sleep } = require('node:timers/promises');
const { createFloorIoActivities } = require('./floor-io-activities');
const { fromDist } = require('./support');

async function main() {
  const [address, taskQueue, modelUrl, databaseUrl, workspace] = process.argv.slice(2);
  const { installWorkerLogging, workerTuning } = fromDist('worker/worker.js');
  const { NativeConnection, Worker } = require('@temporalio/worker');
  installWorkerLogging({ level: 'warn' });
  const io = modelUrl ? await createFloorIoActivities({ modelUrl, databaseUrl, workspace }) : null;
  const worker = await Worker.create({
    // The goal worker's connection to a loopback server sends no gzip (worker/temporal-connect.ts):
    // the floor gets the same, so that the ratio compares the steps, not the transport.
    connection: await NativeConnection.connect({ address, grpcCompression: { codec: 'none' } }),
    taskQueue,
    workflowsPath: require.resolve('./floor-workflow.js'),
    activities: { model: (delayMs) => sleep(delayMs), tool: async () => {}, ...io?.activities },
    ...workerTuning(),
  });
  process.stderr.write('floor worker running\n');
  await worker.run();
  await io?.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
