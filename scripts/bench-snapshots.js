#!/usr/bin/env node
/**
 * Cost of a per-step workspace snapshot (issue 17 §3) on a repository of 10,000 files: the median of
 * N snapshots with no change, and with a few files changed (one edited, one new). Run after `npm run build`:
 *   node scripts/bench-snapshots.js [files=10000] [runs=7]
 */
const { execFileSync } = require('node:child_process');
const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const { snapshotWorkspace } = require('../dist/activities/workspace-snapshot');

const FILES = Number(process.argv[2] ?? 10_000);
const RUNS = Number(process.argv[3] ?? 7);

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const repo = mkdtempSync(path.join(tmpdir(), 'goalrun-bench-'));
  const git = (...args) => execFileSync('git', args, { cwd: repo, stdio: 'pipe' });
  git('init', '-q');
  for (let i = 0; i < FILES; i++) {
    const dir = path.join(repo, `d${i % 100}`);
    if (i < 100) mkdirSync(dir);
    writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`.repeat(20));
  }
  git('add', '-A');
  git('-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-qm', 'files');
  let step = 0;
  const time = async () => {
    step += 1;
    const started = process.hrtime.bigint();
    const result = await snapshotWorkspace({ sessionId: 'bench', workspace: repo, step });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (!result.taken) throw new Error(result.reason);
    return { ms, reused: result.reused };
  };
  await time(); // the first snapshot of a session
  const unchanged = [];
  for (let i = 0; i < RUNS; i++) unchanged.push((await time()).ms);
  const changed = [];
  for (let i = 0; i < RUNS; i++) {
    writeFileSync(path.join(repo, 'd1', 'f1.txt'), `edit ${i}\n`);
    writeFileSync(path.join(repo, `new-${i}.txt`), `new ${i}\n`);
    changed.push((await time()).ms);
  }
  const objects = execFileSync('git', ['count-objects', '-v'], { cwd: repo }).toString().split('\n')[0];
  console.log(`files: ${FILES}, runs: ${RUNS}`);
  console.log(`snapshot, no change:     median ${median(unchanged).toFixed(1)} ms`);
  console.log(`snapshot, a few changes: median ${median(changed).toFixed(1)} ms`);
  console.log(`loose objects after all: ${objects}`);
  rmSync(repo, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
