#!/usr/bin/env node
/**
 * Times compaction planning over a large ledger: planPrune and planSummary over ledgers that
 * total about 1M tokens, with few large entries and with many small ones. Prints figures only.
 *
 *   npm run build && node scripts/bench-prune.js
 */
const { performance } = require('node:perf_hooks');
const { benchArgs } = require('./bench/args');
const { planPrune } = require('../dist/core/compaction/prune');
const { planSummary } = require('../dist/core/compaction/summary-span');
const { initialContextPlan } = require('../dist/core/context-plan');

benchArgs(__filename, { options: {} });

const TARGET_TOKENS = 1_000_000;
const REPEAT = 7;

/** A ledger of tool exchanges whose outputs average `outputTokens`, totalling about 1M tokens. */
function ledgerOf(outputTokens) {
  const ledger = [{ seq: 1, role: 'user', tokens: 300, kind: 'first' }];
  let seq = 2;
  let total = 300;
  let spool = 1;
  let n = 0;
  while (total < TARGET_TOKENS) {
    const id = `call_${n++}`;
    // Deterministic spread around the mean: 0.2x to 1.8x.
    const tokens = Math.max(20, Math.round(outputTokens * (0.2 + ((n * 7919) % 17) / 10)));
    ledger.push({ seq: seq++, role: 'assistant', tokens: 60, toolCallIds: [id] });
    ledger.push({
      seq: seq++,
      role: 'tool',
      tokens,
      toolCallId: id,
      toolName: 'bash',
      ok: n % 5 !== 0,
      ...(tokens > 500 ? { spoolId: spool++, bytes: tokens * 4 } : {}),
    });
    total += 60 + tokens;
  }
  return { ledger, total };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time(fn) {
  const runs = [];
  for (let i = 0; i < REPEAT; i++) {
    const start = performance.now();
    fn();
    runs.push(performance.now() - start);
  }
  return median(runs);
}

for (const outputTokens of [2_000, 400, 100]) {
  const { ledger, total } = ledgerOf(outputTokens);
  const plan = initialContextPlan(1);
  const options = { windowTokens: 200_000, thresholdTokens: 170_000, fixedTokens: 5_000 };
  const pruneMs = time(() => planPrune(ledger, plan, options));
  const pruned = planPrune(ledger, plan, options);
  const summaryMs = time(() => planSummary(ledger, pruned.plan, {}));
  console.log(
    `ledger ${ledger.length} entries, ${total} tokens (outputs ~${outputTokens} tokens): ` +
      `planPrune ${pruneMs.toFixed(1)} ms (stubbed ${pruned.stubbed.length}, ${pruned.before} → ${pruned.after}), ` +
      `planSummary ${summaryMs.toFixed(1)} ms (median of ${REPEAT})`,
  );
}
