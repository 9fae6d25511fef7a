#!/usr/bin/env node
/**
 * bench-stack-capture: what the SDK's per-promise stack capture costs the workflow thread. Replays
 * every saved goal history (test/fixtures/histories) with the built bundle, which turns the capture
 * off (workflows/promise-stacks.ts), and with a bundle of the same workflows without that preload,
 * alternating, and prints the CPU time of each replay round (this process and its workflow thread; one replay worker per round,
 * whose start, the same for both, is included).
 *
 *   npm run build && node scripts/bench-stack-capture.js [--rounds 5] [--histories N] [--without PATH]
 *
 * --histories: replay only the first N saved histories (default: all; the smoke run takes a few).
 * --without: a bundle with the capture on (default: one is made here, in about half a minute).
 */
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { benchArgs, usageError } = require('./bench/args');
const { DIST, fmt, median, runMain } = require('./bench/support');

const FIXTURES = path.resolve(__dirname, '../test/fixtures/histories');

function savedHistories(limit) {
  const { temporal } = require('@temporalio/proto');
  const histories = [];
  for (const release of fs.readdirSync(FIXTURES)) {
    for (const file of fs.readdirSync(path.join(FIXTURES, release))) {
      if (!file.endsWith('.json') || file === 'patches.json') continue;
      for (const json of JSON.parse(fs.readFileSync(path.join(FIXTURES, release, file), 'utf8')))
        histories.push(temporal.api.history.v1.History.fromObject(json));
    }
  }
  return histories.slice(0, limit);
}

async function bundleWithCapture() {
  const { bundleWorkflowCode } = require('@temporalio/worker');
  const { workflowInterceptorsPath } = require(path.join(DIST, 'worker/bundle.js'));
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(DIST, 'workflows/index.js'),
    workflowInterceptorModules: [workflowInterceptorsPath()],
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error },
  });
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-stack-')), 'with-capture.js');
  fs.writeFileSync(file, code);
  return file;
}

/** CPU ms (user + system, all threads) of one replay of every history. */
async function replayAll(bundle, histories) {
  const { Worker } = require('@temporalio/worker');
  const before = process.cpuUsage();
  const started = performance.now();
  const { silentWorkflowSinks } = require(path.join(DIST, 'worker/telemetry.js'));
  const replays = Worker.runReplayHistories(
    { workflowBundle: { codePath: bundle }, sinks: silentWorkflowSinks() },
    histories.map((history, i) => ({ workflowId: `saved-${i}`, history })),
  );
  for await (const result of replays) if (result.error) throw result.error;
  const cpu = process.cpuUsage(before);
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - started };
}

async function main() {
  const { values } = benchArgs(__filename, {
    options: {
      rounds: { type: 'string', default: '5' },
      histories: { type: 'string' },
      without: { type: 'string' },
    },
  });
  const rounds = Number(values.rounds);
  const limit = values.histories === undefined ? undefined : Number(values.histories);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0))
    throw usageError(`--histories wants a whole number above 0, not ${values.histories}`);
  require(path.join(DIST, 'worker/worker.js')).installWorkerLogging({ level: 'warn' });
  const histories = savedHistories(limit);
  const events = histories.reduce((sum, history) => sum + history.events.length, 0);
  const withCapture = values.without ?? (await bundleWithCapture());
  const withoutCapture = path.join(DIST, 'workflow-bundle.js');
  console.log(`${histories.length} histories, ${events} events; load average ${os.loadavg()[0].toFixed(1)}`);
  // Warm-up of both (the first replay compiles the bundle and the source map).
  await replayAll(withCapture, histories);
  await replayAll(withoutCapture, histories);
  const on = [];
  const off = [];
  for (let round = 0; round < rounds; round++) {
    on.push(await replayAll(withCapture, histories));
    off.push(await replayAll(withoutCapture, histories));
  }
  const ratios = on.map((run, i) => off[i].cpuMs / run.cpuMs);
  console.log(`capture on  (SDK default): CPU ${fmt(median(on.map((r) => r.cpuMs)), 0)} ms per round`);
  console.log(`capture off (goalrun):     CPU ${fmt(median(off.map((r) => r.cpuMs)), 0)} ms per round`);
  console.log(
    `off/on per pair: ${ratios.map((r) => fmt(r, 2)).join(', ')} (median ${fmt(median(ratios), 2)}); load average ${os.loadavg()[0].toFixed(1)}`,
  );
}

runMain(main);
