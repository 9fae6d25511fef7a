#!/usr/bin/env node
/**
 * bench-worker-start: what a `goalrun worker` costs to start, next to a bare SDK worker.
 *
 *   node scripts/bench-worker-start.js [--rounds 5]
 *
 * Starts its own headless Temporal dev server and a throwaway database, then, --rounds times,
 * alternating:
 *
 *   goalrun worker   the built CLI, until it says it polls ("press Ctrl-C to stop"): its modules,
 *                    config, store, sandbox check, retention schedule and Worker.create
 *   bare SDK worker  a script that connects and creates a Worker with goalrun's own prebuilt workflow
 *                    bundle and no activities, until Worker.create returns (the floor of any worker
 *                    that runs these workflows)
 *
 * and prints each one's CPU to that point (user + system, from /proc) and wall time, medians with
 * the range, and the ratio. The test suite starts a few hundred workers, so this is much of its CPU.
 * It asserts nothing.
 */
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { benchArgs, usageError } = require('./bench/args');
const { cpuSeconds } = require('./bench/processes');
const { createDatabase, DIST, fmt, median, onCleanup, runMain, spread, startTemporalServer } =
  require('./bench/support');

/** How long one worker may take to say it polls, on a loaded machine. */
const READY_TIMEOUT_MS = 120_000;

const BARE_WORKER = `
const { NativeConnection, Worker } = require(${JSON.stringify(require.resolve('@temporalio/worker'))});
(async () => {
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    taskQueue: process.env.GOALRUN_TASK_QUEUE,
    workflowBundle: { codePath: ${JSON.stringify(path.join(DIST, 'workflow-bundle.js'))} },
  });
  console.log('ready');
  await worker.run();
})().catch((err) => { console.error(err); process.exit(1); });
`;

/** Starts `args` with node, waits for `ready` in its output; returns its CPU seconds and wall ms to that point. */
async function timeStart(args, env, ready) {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no "${ready}" after ${READY_TIMEOUT_MS} ms: ${output}`)),
        READY_TIMEOUT_MS,
      );
      const collect = (chunk) => {
        output += chunk;
        if (output.includes(ready)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`exited ${code} before "${ready}": ${output}`));
      });
    });
    return { cpu: cpuSeconds(child.pid), ms: performance.now() - started };
  } finally {
    child.removeAllListeners('exit');
    child.kill('SIGKILL');
  }
}

async function main() {
  const { values } = benchArgs(__filename, { options: { rounds: { type: 'string', default: '5' } } });
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw usageError('--rounds must be a positive integer');
  if (!fs.existsSync(path.join(DIST, 'workflow-bundle.js')))
    throw new Error('no dist/workflow-bundle.js: npm run build first');

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-bench-worker-start-'));
  onCleanup('remove temp dir', () => fs.rmSync(tmp, { recursive: true, force: true }));
  const bare = path.join(tmp, 'bare-worker.js');
  fs.writeFileSync(bare, BARE_WORKER);
  const server = await startTemporalServer();
  const db = await createDatabase();
  const env = (queue) => ({
    ...process.env,
    GOALRUN_HOME: path.join(tmp, 'home'),
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: server.address,
    GOALRUN_TASK_QUEUE: queue,
  });
  const cases = {
    'goalrun worker': (round) =>
      timeStart(
        [path.join(DIST, 'cli/main.js'), 'worker'],
        env(`bench-start-goalrun-${round}`),
        'press Ctrl-C',
      ),
    'bare SDK worker': (round) => timeStart([bare], env(`bench-start-bare-${round}`), 'ready'),
  };
  const results = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, start] of Object.entries(cases)) results[name].push(await start(round));
  }
  console.log(`worker start, ${rounds} rounds alternating, load average ${os.loadavg()[0].toFixed(1)}:`);
  for (const [name, runs] of Object.entries(results)) {
    const cpu = runs.map((run) => run.cpu);
    const ms = runs.map((run) => run.ms);
    console.log(
      `  ${name.padEnd(16)} CPU ${spread(cpu, 2)} s, ready after ${spread(ms, 0)} ms (median (min–max))`,
    );
  }
  const ratio =
    median(results['goalrun worker'].map((run) => run.cpu)) /
    median(results['bare SDK worker'].map((run) => run.cpu));
  console.log(`  goalrun worker / bare SDK worker, CPU: ${fmt(ratio, 2)}x`);
}

runMain(main);
