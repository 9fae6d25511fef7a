#!/usr/bin/env node
/**
 * bench-spawn: the worker's CPU per tool process, started directly (a fork of this process) against
 * through the spawn server (activities/sandbox/spawn-server.ts), alternating, from a process holding
 * about 300 MB (as a busy worker does). Each call is a minimal bubblewrap sandbox running `true`.
 *
 *   npm run build && node scripts/bench-spawn.js [--rounds 5] [--calls 20]
 */
'use strict';

const os = require('node:os');
const path = require('node:path');
const { benchArgs } = require('./bench/args');
const { DIST, fmt, median, runMain } = require('./bench/support');

const MIB = 1024 * 1024;
/** What this process holds, so that a fork has as much to copy as a worker's would. */
const HELD_MB = 300;

async function one(startChild) {
  const started = await startChild({
    file: 'bwrap',
    args: ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-pid', '--die-with-parent', 'true'],
    env: { PATH: '/usr/bin:/bin' },
    cwd: os.tmpdir(),
    stdin: false,
    infoFd: false,
  });
  if (!started.ok) throw new Error(started.error);
  started.child.stdout.resume();
  started.child.stderr.resume();
  await new Promise((resolve) => started.child.once('close', resolve));
}

async function round(startChild, mode, calls) {
  if (mode === 'direct') process.env.GOALRUN_SPAWN_SERVER = 'off';
  else delete process.env.GOALRUN_SPAWN_SERVER;
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < calls; i++) await one(startChild);
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000 / calls, wallMs: (performance.now() - started) / calls };
}

async function main() {
  const { values } = benchArgs(__filename, {
    options: { rounds: { type: 'string', default: '5' }, calls: { type: 'string', default: '20' } },
  });
  const { startChild, stopSpawnServer } = require(path.join(DIST, 'activities/sandbox/spawn-child.js'));
  const held = Array.from({ length: HELD_MB }, (_, i) => Buffer.alloc(MIB, i));
  console.log(
    `holding ${HELD_MB} MB (rss ${fmt(process.memoryUsage().rss / MIB, 0)} MB); load average ${fmt(os.loadavg()[0])}`,
  );
  await round(startChild, 'server', 3);
  await round(startChild, 'direct', 3);
  const direct = [];
  const server = [];
  for (let i = 0; i < Number(values.rounds); i++) {
    direct.push(await round(startChild, 'direct', Number(values.calls)));
    server.push(await round(startChild, 'server', Number(values.calls)));
  }
  for (const [name, runs] of [
    ['direct', direct],
    ['spawn server', server],
  ])
    console.log(
      `${name.padEnd(13)} worker CPU ${fmt(median(runs.map((r) => r.cpuMs)), 2)} ms per call, wall ${fmt(median(runs.map((r) => r.wallMs)))} ms`,
    );
  const ratios = server.map((run, i) => run.cpuMs / direct[i].cpuMs);
  console.log(
    `server/direct CPU per pair: ${ratios.map((r) => fmt(r, 2)).join(', ')}; load average ${fmt(os.loadavg()[0])}`,
  );
  stopSpawnServer();
  held.length = 0;
}

runMain(main);
