#!/usr/bin/env node
/**
 * Cost of a per-step workspace snapshot (issue 17 §3, issue 24) on a repository of 10,000 files: the
 * median of N snapshots with no change, and with a few files changed (one edited, one new). Beside
 * it, in the same run, the baseline: the same plumbing run straight on the host with the worker's
 * environment (how snapshots ran before issue 24, unsafe), and what one bubblewrap start costs here.
 * Run after `npm run build`:
 *   node scripts/bench-snapshots.js [files=10000] [runs=7]
 */
const { execFileSync } = require('node:child_process');
const {
  copyFileSync,
  mkdtempSync,
  mkdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const { benchArgs } = require('./bench/args');
const { snapshotWorkspace } = require('../dist/activities/workspace-snapshot');
const { defaultSandboxHost } = require('../dist/activities/sandbox/host');

const { positionals } = benchArgs(__filename, { allowPositionals: true, options: {} });
const FILES = Number(positionals[0] ?? 10_000);
const RUNS = Number(positionals[1] ?? 7);

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function makeRepo() {
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
  return repo;
}

/** The snapshot as it was before issue 24: plumbing on the host, with the worker's environment. */
function hostSnapshot(repo, step) {
  const scratch = mkdtempSync(path.join(tmpdir(), 'goalrun-bench-index-'));
  const env = {
    ...process.env,
    GIT_INDEX_FILE: path.join(scratch, 'index'),
    GIT_AUTHOR_NAME: 'b',
    GIT_AUTHOR_EMAIL: 'b@b',
    GIT_COMMITTER_NAME: 'b',
    GIT_COMMITTER_EMAIL: 'b@b',
  };
  const git = (...args) =>
    execFileSync('git', ['-c', 'core.hooksPath=/dev/null', ...args], { cwd: repo, env })
      .toString()
      .trim();
  try {
    git('rev-parse', '--is-inside-work-tree');
    git('rev-parse', '--show-toplevel');
    // As the snapshot did and does: the copy keeps the index's time to the second (racy git).
    copyFileSync(path.join(repo, '.git', 'index'), env.GIT_INDEX_FILE);
    const stamp = Math.floor(statSync(path.join(repo, '.git', 'index')).mtimeMs / 1000);
    utimesSync(env.GIT_INDEX_FILE, stamp, stamp);
    git('add', '-A', '--', '.');
    const tree = git('write-tree');
    git('for-each-ref', '--format=%(refname)', 'refs/goalrun/baseline/');
    const previous = step > 1 ? git('rev-parse', `refs/goalrun/baseline/${step - 1}`) : '';
    if (previous && git('rev-parse', `${previous}^{tree}`) === tree) {
      git('update-ref', `refs/goalrun/baseline/${step}`, previous);
      return;
    }
    const commit = git('commit-tree', tree, ...(previous ? ['-p', previous] : []), '-m', 'baseline');
    git('update-ref', `refs/goalrun/baseline/${step}`, commit);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function measure(label, repo, snapshot) {
  let step = 0;
  const time = async () => {
    step += 1;
    const started = process.hrtime.bigint();
    await snapshot(step);
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  await time(); // the first snapshot of a session
  const unchanged = [];
  for (let i = 0; i < RUNS; i++) unchanged.push(await time());
  const changed = [];
  for (let i = 0; i < RUNS; i++) {
    writeFileSync(path.join(repo, 'd1', 'f1.txt'), `edit ${label} ${i}\n`);
    writeFileSync(path.join(repo, `new-${label}-${i}.txt`), `new ${i}\n`);
    changed.push(await time());
  }
  return { unchanged: median(unchanged), changed: median(changed) };
}

async function main() {
  const repo = makeRepo();
  const host = defaultSandboxHost();
  const bwrapStarts = [];
  for (let i = 0; i < RUNS; i++) {
    const started = process.hrtime.bigint();
    execFileSync(host.bwrapPath, ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-pid', '--', 'true']);
    bwrapStarts.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  const baseline = await measure('host', repo, (step) => hostSnapshot(repo, step));
  const sandboxed = await measure('sandbox', repo, async (step) => {
    const result = await snapshotWorkspace({ sessionId: 'bench', workspace: repo, step });
    if (!result.taken) throw new Error(result.reason);
  });
  const objects = execFileSync('git', ['count-objects', '-v'], { cwd: repo }).toString().split('\n')[0];
  const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
  console.log(
    `files: ${FILES}, runs: ${RUNS}, one bubblewrap start: median ${median(bwrapStarts).toFixed(1)} ms`,
  );
  console.log(
    `snapshot, no change:     median ${sandboxed.unchanged.toFixed(1)} ms (host baseline ${baseline.unchanged.toFixed(1)} ms, ${ratio(sandboxed.unchanged, baseline.unchanged)})`,
  );
  console.log(
    `snapshot, a few changes: median ${sandboxed.changed.toFixed(1)} ms (host baseline ${baseline.changed.toFixed(1)} ms, ${ratio(sandboxed.changed, baseline.changed)})`,
  );
  console.log(`loose objects after all: ${objects}`);
  rmSync(repo, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
