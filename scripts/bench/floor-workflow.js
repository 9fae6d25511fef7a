/**
 * The floor of the concurrency benchmark: a workflow that runs what a goal's steps run, with
 * nothing of goalrun: per step one "model" activity that sleeps like the model, then (but after
 * the last step) one no-op "tool" activity.
 */
const { proxyActivities } = require('@temporalio/workflow');

const { model, tool } = proxyActivities({ startToCloseTimeout: '60s' });

/** Runs `steps` steps of model (sleeping `delayMs`) plus tool, the last one without a tool. */
async function floorWorkflow(steps, delayMs) {
  for (let step = 1; step <= steps; step++) {
    await model(delayMs);
    if (step < steps) await tool();
  }
  return steps;
}

module.exports = { floorWorkflow };
