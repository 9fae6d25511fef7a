#!/usr/bin/env node
/**
 * bench-vm-timeout: what the workflow sandbox's deadlock timeout costs per call into it.
 *
 *   node scripts/bench-vm-timeout.js [--calls 5000] [--rounds 3]
 *
 * The SDK runs every call into a workflow's V8 context (an activation, each unblocking pass, the
 * conclusion) as vm `runInContext` with `timeout: isolateExecutionTimeout` (5 s by default), so a
 * workflow stuck in a loop fails its task instead of holding the thread. Node enforces that timeout
 * with a watchdog that creates and joins a thread of its own for every call. This script times a
 * trivial script run in a context like the SDK's (microtaskMode afterEvaluate) with that timeout and
 * without it, alternating, and prints the CPU (user and system) per call and the ratio. A goal step
 * makes about 11 such calls (docs/performance.md, "The sandbox's deadlock timeout").
 */
'use strict';

const vm = require('node:vm');
const { benchArgs } = require('./bench/args');

const { values } = benchArgs(__filename, {
  options: {
    calls: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
  },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);
if (!Number.isInteger(calls) || calls < 1 || !Number.isInteger(rounds) || rounds < 1) {
  console.error('bench-vm-timeout: --calls and --rounds must be positive integers');
  process.exit(2);
}

// The SDK's default isolateExecutionTimeout.
const TIMEOUT_MS = 5000;
const context = vm.createContext({}, { microtaskMode: 'afterEvaluate' });
const script = new vm.Script('globalThis.n = (globalThis.n ?? 0) + 1');

function measure(options) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) script.runInContext(context, options);
  const wallUs = Number(process.hrtime.bigint() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / calls, systemUs: used.system / calls, wallUs: wallUs / calls };
}

const fmt = (n) => n.toFixed(2);
console.log(`node ${process.version}: ${calls} calls a round, ${rounds} round(s), timeout ${TIMEOUT_MS} ms`);
const ratios = [];
for (let round = 1; round <= rounds; round++) {
  const timed = measure({ timeout: TIMEOUT_MS });
  const plain = measure({});
  ratios.push(timed.cpuUs / plain.cpuUs);
  console.log(
    `round ${round}: with the timeout ${fmt(timed.cpuUs)} µs CPU per call (${fmt(timed.systemUs)} system), ` +
      `${fmt(timed.wallUs)} µs wall; without ${fmt(plain.cpuUs)} µs CPU (${fmt(plain.systemUs)} system), ` +
      `${fmt(plain.wallUs)} µs wall; ${fmt(timed.cpuUs / plain.cpuUs)}x`,
  );
}
ratios.sort((a, b) => a - b);
console.log(
  `CPU per call with the timeout against without, median of the rounds: ${fmt(ratios[Math.floor(ratios.length / 2)])}x`,
);
