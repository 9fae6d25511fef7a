/**
 * Baseline workflow for scripts/bench-step-overhead.js: runs `count` no-op activities one after
 * another, so its time per activity is what Temporal itself costs (scheduling, a workflow task per
 * completion, history writes) with none of goalrun's store or tool work.
 */
const { proxyActivities } = require('@temporalio/workflow');

const { noop } = proxyActivities({ startToCloseTimeout: '30s' });

/** Runs `count` no-op activities sequentially and returns how many ran. */
async function noopWorkflow(count) {
  for (let i = 0; i < count; i++) await noop();
  return count;
}

module.exports = { noopWorkflow };
