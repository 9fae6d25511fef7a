#!/usr/bin/env node
// npm run test:stress [-- vitest args]: the e2e files (test/e2e) under a CPU burner, one busy process
// per core, so a test that assumes how fast a goal runs fails here rather than on a loaded CI machine.
// Arguments go to vitest; any that name an existing file or folder replace test/e2e as the files run.
// GOALRUN_STRESS_BURNERS sets the number of busy processes (default: one per core).
// Needs a built dist/ (the npm script builds first). Prints the time taken; exits with vitest's code.
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const repo = path.resolve(__dirname, '..');
const DEFAULT_FILES = ['test/e2e'];
// How many loop turns a burner spins between checks that its parent is still alive: often enough to
// exit within a fraction of a second of an orphaning, rare enough to cost nothing.
const PARENT_CHECK_TURNS = 0xffffff;
// A burner exits by itself when this script is gone (SIGKILL leaves no chance to kill it).
const BURNER_SOURCE = `const p = process.ppid; for (let i = 1; ; i++) { if ((i & ${PARENT_CHECK_TURNS}) === 0 && process.ppid !== p) process.exit(0); }`;

function burnerCount() {
  const raw = process.env.GOALRUN_STRESS_BURNERS;
  if (raw === undefined || raw === '') return os.availableParallelism();
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`test:stress: GOALRUN_STRESS_BURNERS must be a whole number ≥ 0, got "${raw}"`);
    process.exit(2);
  }
  return n;
}

function temporalCliPath() {
  if (process.env.TEMPORAL_CLI_PATH) return process.env.TEMPORAL_CLI_PATH;
  return execFileSync('bash', [path.join(repo, 'scripts/ensure-temporal.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

const args = process.argv.slice(2);
const namesFiles = args.some((a) => !a.startsWith('-') && fs.existsSync(path.resolve(repo, a)));
const vitestArgs = ['vitest', 'run', ...(namesFiles ? [] : DEFAULT_FILES), ...args];

const burners = [];
let vitest;
function stopAll() {
  for (const b of burners) if (b.exitCode === null && b.signalCode === null) b.kill('SIGKILL');
}
process.on('exit', stopAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    stopAll();
    // vitest got the terminal's Ctrl-C too; a kill from elsewhere is passed on. Its exit ends this.
    if (vitest && vitest.exitCode === null) vitest.kill(signal);
    else process.exit(130);
  });
}

const env = { ...process.env, TEMPORAL_CLI_PATH: temporalCliPath() };
const count = burnerCount();
for (let i = 0; i < count; i++) {
  burners.push(spawn(process.execPath, ['-e', BURNER_SOURCE], { stdio: 'ignore' }));
}
console.error(`test:stress: ${count} busy process(es) beside: npx ${vitestArgs.join(' ')}`);

const started = Date.now();
vitest = spawn('npx', vitestArgs, { cwd: repo, env, stdio: 'inherit' });
vitest.on('exit', (code, signal) => {
  stopAll();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const outcome = code === 0 ? 'passed' : `failed (${signal ?? `exit ${code}`})`;
  console.error(`test:stress: ${outcome} in ${seconds} s with ${count} busy process(es)`);
  process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0));
});
