/**
 * Processes of the concurrency benchmark: starting and stopping them, their peak memory and CPU
 * from /proc, and scraping and summarizing a worker's Prometheus metrics.
 */
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const { fmt, onCleanup } = require('./support');

const WORKER_READY_TIMEOUT_MS = 60_000;

/** Starts a node process running `args`, resolves once its output contains `ready`. */
async function startProcess(name, args, env, ready) {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  onCleanup(`stop ${name}`, async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
  });
  const deadline = Date.now() + WORKER_READY_TIMEOUT_MS;
  while (!output.includes(ready)) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${output}`);
    if (Date.now() > deadline) throw new Error(`${name} did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, output: () => output, peakRssMb: () => peakRssMb(child.pid) };
}

/** The highest resident set size the process has had (VmHWM), in MB; NaN where /proc is missing. */
function peakRssMb(pid) {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds (user + system) a process has used so far; NaN where /proc is missing. */
function cpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Runs `fn`, measuring the CPU each named process used meanwhile. */
async function withCpu(pids, fn) {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const result = await fn();
  const cpu = Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid) - before[name]]),
  );
  return { ...result, cpu };
}

/** Scrapes a worker's metrics: `name{labels}` → value. */
async function scrape(url) {
  const text = await (await fetch(url)).text();
  const values = new Map();
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+(?:\{.*\})?)\s+(\S+)$/.exec(line);
    if (match) values.set(match[1], Number(match[2]));
  }
  return values;
}

function metricTotal(metrics, name, labels = {}) {
  let sum = 0;
  for (const [series, value] of metrics) {
    if (series !== name && !series.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([key, v]) => series.includes(`${key}="${v}"`))) sum += value;
  }
  return sum;
}

/** Where a worker spent its time, from its metrics: mean latencies (sum / count) and its CPU. */
/** `goals`: how many goals this worker's counters cover, for the per-goal figures (0: none printed). */
async function diagnose(worker, name, goals = 0) {
  const metrics = await scrape(worker.metricsUrl);
  const mean = (metric, labels) => {
    const count = metricTotal(metrics, `${metric}_count`, labels);
    return count > 0 ? `${fmt(metricTotal(metrics, `${metric}_sum`, labels) / count, 0)} ms` : '-';
  };
  const parts = [
    `workflow task: wait ${mean('temporal_workflow_task_schedule_to_start_latency')}, run ${mean('temporal_workflow_task_execution_latency')}`,
  ];
  for (const type of ['modelStep', 'runTool']) {
    parts.push(
      `${type}: wait ${mean('temporal_activity_schedule_to_start_latency', { activity_type: type })}, run ${mean('temporal_activity_execution_latency', { activity_type: type })}`,
    );
  }
  // `workflow_task_replay_latency` is recorded by sdk-core for EVERY workflow task (the time to catch up
  // to the end of the task's new events), not only for full replays: its count is the number of
  // workflow tasks. A full replay from the first event is a sticky-cache miss (a task that came
  // with the whole history because the run was not in this worker's cache).
  const counter = (metric) => metricTotal(metrics, metric) + metricTotal(metrics, `${metric}_total`);
  const workflowTasks = metricTotal(metrics, 'temporal_workflow_task_replay_latency_count');
  const perGoal = (value) => (goals > 0 ? ` (${fmt(value / goals, 1)} per goal)` : '');
  parts.push(
    `workflow tasks ${workflowTasks}${perGoal(workflowTasks)}, ` +
      `full replays (sticky cache misses) ${counter('temporal_sticky_cache_miss')}${perGoal(counter('temporal_sticky_cache_miss'))}, ` +
      `cache hits ${counter('temporal_sticky_cache_hit')}, evictions ${counter('temporal_sticky_cache_total_forced_eviction')}`,
  );
  parts.push(
    `CPU ${fmt(metricTotal(metrics, 'process_cpu_seconds_total'), 1)} s, event loop lag p99 ${fmt(1000 * metricTotal(metrics, 'nodejs_eventloop_lag_p99_seconds'), 0)} ms`,
  );
  console.log(`  ${name}: ${parts.join('; ')}`);
}

module.exports = { startProcess, peakRssMb, cpuSeconds, withCpu, scrape, metricTotal, diagnose };
