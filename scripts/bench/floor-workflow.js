/**
 * The floors of the concurrency benchmark: workflows that run what a goal's steps run, with nothing
 * of goalrun. The bare floor: per step one "model" activity that sleeps like the model, then (but
 * after the last step) one no-op "tool" activity. The I/O floor (`--floor-io`): the same steps with
 * the I/O a step cannot avoid (scripts/bench/floor-io-activities.js).
 */
const { proxyActivities, workflowInfo } = require('@temporalio/workflow');

const { model, tool, modelIo, toolIo } = proxyActivities({ startToCloseTimeout: '60s' });

/** Runs `steps` steps of model (sleeping `delayMs`) plus tool, the last one without a tool. */
async function floorWorkflow(steps, delayMs) {
  for (let step = 1; step <= steps; step++) {
    await model(delayMs);
    if (step < steps) await tool();
  }
  return steps;
}

/** Runs `steps` steps of a model request plus a file read, each stored as one row; the last without a tool. */
async function floorIoWorkflow(steps) {
  const { workflowId } = workflowInfo();
  for (let step = 1; step <= steps; step++) {
    await modelIo(workflowId, step);
    if (step < steps) await toolIo(workflowId, step);
  }
  return steps;
}

module.exports = { floorWorkflow, floorIoWorkflow };
