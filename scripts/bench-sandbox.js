#!/usr/bin/env node
/**
 * How long a sandboxed `bash` call takes next to an unsandboxed one, in the same run: the bash
 * tool end to end (prepare, spawn, wait, kill check), alternating the two so that machine load
 * hits both alike. Prints figures only.
 *
 *   npm run build && node scripts/bench-sandbox.js [calls per mode, default 40]
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { benchArgs } = require('./bench/args');
const { runBash } = require('../dist/activities/tools/bash');
const { JobManager } = require('../dist/activities/tools/jobs');
const { DEFAULT_SANDBOX } = require('../dist/core/sandbox-settings');

const { positionals } = benchArgs(__filename, { allowPositionals: true, options: {} });
const CALLS = Number(positionals[0] ?? 40);
const WARMUP = 3;
const COMMANDS = [
  'true',
  'echo hello; ls -la > /dev/null',
  'for i in $(seq 1 200); do echo $i; done | wc -l',
];

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = samples.reduce((sum, x) => sum + x, 0) / samples.length;
  return { median: at(0.5), p90: at(0.9), mean };
}

async function time(command, sandbox, context) {
  const started = performance.now();
  const outcome = await runBash({ command }, { ...context, sandbox });
  if (!outcome.ok) throw new Error(`${sandbox.mode}: ${command} failed: ${outcome.output}`);
  return performance.now() - started;
}

async function main() {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-bench-sandbox-'));
  const jobs = new JobManager();
  const context = {
    workspace,
    sessionId: `bench-${process.pid}`,
    toolCallId: 'bench',
    signal: new AbortController().signal,
    heartbeat: () => {},
    store: undefined,
    jobs,
  };
  const sandboxed = DEFAULT_SANDBOX;
  const plain = { ...DEFAULT_SANDBOX, mode: 'off' };
  console.log(
    `bash tool, ${CALLS} calls per mode and command, alternating; ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(2)}`,
  );
  try {
    for (const command of COMMANDS) {
      for (let i = 0; i < WARMUP; i++) {
        await time(command, sandboxed, context);
        await time(command, plain, context);
      }
      const inSandbox = [];
      const unsandboxed = [];
      for (let i = 0; i < CALLS; i++) {
        inSandbox.push(await time(command, sandboxed, context));
        unsandboxed.push(await time(command, plain, context));
      }
      const a = stats(inSandbox);
      const b = stats(unsandboxed);
      console.log(`\n  ${command}`);
      console.log(
        `    sandboxed    median ${a.median.toFixed(1)} ms  p90 ${a.p90.toFixed(1)} ms  mean ${a.mean.toFixed(1)} ms`,
      );
      console.log(
        `    unsandboxed  median ${b.median.toFixed(1)} ms  p90 ${b.p90.toFixed(1)} ms  mean ${b.mean.toFixed(1)} ms`,
      );
      console.log(
        `    ratio (median) ${(a.median / b.median).toFixed(2)}x, extra ${(a.median - b.median).toFixed(1)} ms per call`,
      );
    }
  } finally {
    await jobs.killSession(context.sessionId);
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
