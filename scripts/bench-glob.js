#!/usr/bin/env node
/**
 * The glob tool on tinyglobby (issue 31) against the matcher it replaced (scripts/bench/legacy-glob.js:
 * a walk of everything below the pattern's literal prefix, each path tested with a RegExp), on one
 * generated tree of about 63,000 files: sources, docs, dotfiles, and the heavy folders real
 * repositories have (node_modules, target, .venv, dist). The two alternate, run after run, so that
 * the machine's load hits both alike. Prints the median of each and the ratio, and checks that both
 * found the same files outside the folders the new one skips. Run after `npm run build`:
 *   node scripts/bench-glob.js [runs=7] [scale=1]
 * scale < 1 shrinks every part of the tree alike (0.02: about 1,300 files, the CI smoke size).
 */
const { mkdirSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const { benchArgs } = require('./bench/args');
const { globTool } = require('../dist/activities/tools/glob');
const { DEFAULT_SKIPPED_DIRS, globNamesDir } = require('../dist/activities/tools/glob-pattern');
const { displayPath } = require('../dist/activities/tools/paths');
const { legacyGlob } = require('./bench/legacy-glob');

const { positionals } = benchArgs(__filename, { allowPositionals: true, options: {} });
const RUNS = Number(positionals[0] ?? 7);
const SCALE = Number(positionals[1] ?? 1);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error('runs must be a positive integer');
if (!(SCALE > 0 && SCALE <= 1)) throw new Error('scale must be a number in (0, 1]');

/** `count` times the scale, at least one: every part of the tree stays. */
function scaled(count) {
  return Math.max(1, Math.round(count * SCALE));
}
const PATTERNS = ['*.md', '**/*.ts', 'src/*/mod1/*.ts', '**/*.md', 'docs/**/*.md', '**/package.json'];

/** Writes the tree: at scale 1, 63,005 files in all, 47,000 of them in folders the new glob skips. */
function makeTree(root) {
  let files = 0;
  const write = (relative) => {
    const file = path.join(root, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, '');
    files += 1;
  };
  for (const name of ['README.md', 'CHANGELOG.md', 'package.json', '.env.example', '.gitignore']) write(name);
  // Sources: 40 packages × 20 modules × 20 files.
  for (let pkg = 0; pkg < scaled(40); pkg += 1)
    for (let mod = 0; mod < 20; mod += 1)
      for (let file = 0; file < 20; file += 1) write(`src/pkg${pkg}/mod${mod}/file${file}.ts`);
  for (let doc = 0; doc < scaled(1_000); doc += 1) write(`docs/section${doc % 50}/page${doc}.md`);
  for (let obj = 0; obj < scaled(3_000); obj += 1)
    write(`.git/objects/${String(obj % 256).padStart(2, '0')}/${obj}`);
  // Dependencies and build output: what a walk of everything spends its time in.
  for (let dep = 0; dep < scaled(1_000); dep += 1)
    for (let file = 0; file < 25; file += 1)
      write(`node_modules/dep${dep}/${file % 5 === 0 ? 'package.json' : `lib/file${file}.js`}`);
  for (let unit = 0; unit < scaled(8_000); unit += 1) write(`target/debug/deps/unit${unit}.d`);
  for (let mod = 0; mod < scaled(4_000); mod += 1)
    write(`.venv/lib/python3.12/site-packages/m${mod % 300}/f${mod}.py`);
  for (let chunk = 0; chunk < scaled(6_000); chunk += 1) write(`dist/assets/chunk${chunk}.js`);
  return files;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function timed(fn) {
  const started = process.hrtime.bigint();
  const result = await fn();
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, result };
}

/** The old glob tool's answer: its matcher, then what it did with the matches (display paths, the listing). */
async function oldGlob(root, pattern) {
  const matches = await legacyGlob(root, pattern);
  const shown = matches.map((relative) => displayPath(root, path.join(root, relative)));
  shown.slice(0, 1_000).join('\n');
  return matches;
}

/** The new glob tool's answer as paths (uncapped count from its footer aside: the cap is 1,000 listed). */
async function newGlob(root, pattern) {
  const context = {
    workspace: root,
    sessionId: 'bench',
    toolCallId: 'bench',
    signal: new AbortController().signal,
    heartbeat: () => {},
    store: undefined,
  };
  const outcome = await globTool.run({ pattern }, context);
  if (!outcome.ok) throw new Error(outcome.output);
  const lines = outcome.output.startsWith('no files match') ? [] : outcome.output.split('\n');
  const more = /^\[(\d+) more matches/.exec(lines.at(-1) ?? '');
  return more
    ? { listed: lines.length - 1, total: lines.length - 1 + Number(more[1]) }
    : { listed: lines.length, total: lines.length };
}

async function main() {
  const root = mkdtempSync(path.join(tmpdir(), 'goalrun-bench-glob-'));
  try {
    const files = makeTree(root);
    console.log(`tree: ${files} files; ${RUNS} runs per matcher, alternating`);
    // A whole walk by each first: the tree's pages cached and both matchers' code compiled before timing.
    await oldGlob(root, '**/*');
    await newGlob(root, '**/*');
    console.log('pattern            old (walk + RegExp)   new (tinyglobby)   ratio   matches old → new');
    for (const pattern of PATTERNS) {
      const old = [];
      const fresh = [];
      let oldMatches = [];
      let newMatches = { total: 0 };
      // One run of each first, untimed: the page cache is then as warm for both.
      await oldGlob(root, pattern);
      await newGlob(root, pattern);
      for (let run = 0; run < RUNS; run += 1) {
        const a = await timed(() => oldGlob(root, pattern));
        const b = await timed(() => newGlob(root, pattern));
        old.push(a.ms);
        fresh.push(b.ms);
        oldMatches = a.result;
        newMatches = b.result;
      }
      const skipped = DEFAULT_SKIPPED_DIRS.filter((dir) => !globNamesDir(pattern, dir));
      const comparable = oldMatches.filter(
        (file) =>
          !file
            .split('/')
            .slice(0, -1)
            .some((dir) => skipped.includes(dir)),
      );
      if (comparable.length !== newMatches.total)
        throw new Error(
          `${pattern}: the old matcher found ${comparable.length} outside skipped folders, the new ${newMatches.total}`,
        );
      const ratio = median(old) / median(fresh);
      console.log(
        `${pattern.padEnd(18)} ${`${median(old).toFixed(1)} ms`.padStart(12)}          ${`${median(fresh).toFixed(1)} ms`.padStart(10)}   ${`${ratio.toFixed(1)}x`.padStart(6)}   ${oldMatches.length} → ${newMatches.total}`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
