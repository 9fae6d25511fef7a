#!/usr/bin/env node
/**
 * measure-estimator: how core/tokens.ts's estimateTokens compares with a real tokenizer, per content type.
 *
 * Run (needs the compiled dist/ and the gpt-tokenizer devDependency, which bundles its encodings, so
 * nothing is downloaded):
 *
 *   npm run build && node scripts/measure-estimator.js [--count 12] [--chars 4000]
 *
 * The samples come from scripts/estimator-samples.js (generated, seeded: the same text every run). For
 * each content type it prints, against o200k_base (GPT-4o, GPT-4.1), the mean, min and max of
 * estimate / real and the mean absolute error in percent; then the mean and min ratio against
 * cl100k_base (GPT-4, GPT-3.5) and the mean ratio of the old characters/4 rule, for comparison.
 * A ratio under 1 is an under-estimate: the one direction a budget threshold cannot afford.
 *
 * Plain CommonJS JavaScript over dist/ on purpose: scripts/ is not part of the TypeScript build and
 * the repo has no TS runner (tsx, ts-node).
 */
'use strict';

const path = require('node:path');
const { parseArgs } = require('node:util');
const { buildSamples, CONTENT_TYPES } = require('./estimator-samples');

const ROOT = path.resolve(__dirname, '..');
/** The rule the estimator replaced, shown for comparison. */
const OLD_CHARS_PER_TOKEN = 4;

function loadEstimator() {
  try {
    return require(path.join(ROOT, 'dist', 'core', 'tokens.js')).estimateTokens;
  } catch (err) {
    console.error(`cannot load dist/core/tokens.js (${err.message}); run \`npm run build\` first`);
    process.exit(2);
  }
}

function stats(values) {
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  return { mean, min: Math.min(...values), max: Math.max(...values) };
}

function main() {
  const { values } = parseArgs({
    options: { count: { type: 'string', default: '12' }, chars: { type: 'string', default: '4000' } },
  });
  const count = Number(values.count);
  const chars = Number(values.chars);
  const estimateTokens = loadEstimator();
  const o200k = require('gpt-tokenizer/encoding/o200k_base');
  const cl100k = require('gpt-tokenizer/encoding/cl100k_base');
  const samples = buildSamples({ count, chars });

  const header = [
    'content type',
    'chars',
    'o200k mean',
    'min',
    'max',
    'MAE %',
    'cl100k mean',
    'min',
    'chars/4 mean',
  ];
  const rows = [header];
  let worst = Number.POSITIVE_INFINITY;
  for (const type of CONTENT_TYPES) {
    const ofType = samples.filter((s) => s.type === type);
    const vsO200k = [];
    const vsCl100k = [];
    const old = [];
    let totalChars = 0;
    for (const { text } of ofType) {
      const estimate = estimateTokens(text);
      const realO200k = o200k.encode(text).length;
      vsO200k.push(estimate / realO200k);
      vsCl100k.push(estimate / cl100k.encode(text).length);
      old.push(Math.ceil(text.length / OLD_CHARS_PER_TOKEN) / realO200k);
      totalChars += text.length;
    }
    const o = stats(vsO200k);
    const c = stats(vsCl100k);
    const mae = (vsO200k.reduce((sum, r) => sum + Math.abs(r - 1), 0) / vsO200k.length) * 100;
    worst = Math.min(worst, o.min);
    rows.push([
      type,
      String(totalChars),
      o.mean.toFixed(2),
      o.min.toFixed(2),
      o.max.toFixed(2),
      mae.toFixed(1),
      c.mean.toFixed(2),
      c.min.toFixed(2),
      stats(old).mean.toFixed(2),
    ]);
  }

  const widths = header.map((_, col) => Math.max(...rows.map((row) => row[col].length)));
  console.log(`estimate / real tokens, ${count} samples per type of about ${chars} characters`);
  for (const row of rows) {
    console.log(
      row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]) : cell.padStart(widths[col]))).join('  '),
    );
  }
  console.log(
    worst >= 1
      ? `no under-estimate against o200k_base (lowest ratio ${worst.toFixed(2)})`
      : `UNDER-ESTIMATE against o200k_base: lowest ratio ${worst.toFixed(2)}`,
  );
}

main();
