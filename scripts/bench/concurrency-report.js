/**
 * What the concurrency benchmark prints: each side's figures, and with two workers how the work
 * was split and that nothing ran twice.
 */
'use strict';

const { fmt, quantile, spread } = require('./support');
const { metricTotal, scrape } = require('./processes');

// ---------------------------------------------------------------------------------------------------
// Checks with two workers: the split, and nothing run twice.

async function checkSplit(ctx, workers, before) {
  const n = ctx.opts.concurrent * ctx.opts.steps;
  const rows = [];
  let steps = 0;
  let tools = 0;
  for (const [i, worker] of workers.entries()) {
    const metrics = await scrape(worker.metricsUrl);
    const was = before[i];
    const delta = (name, labels) => metricTotal(metrics, name, labels) - metricTotal(was, name, labels);
    const row = {
      modelSteps: delta('goalrun_model_steps_total'),
      toolRuns: delta('goalrun_tool_runs_total'),
      workflowTasks: delta('temporal_workflow_task_execution_latency_count'),
    };
    steps += row.modelSteps;
    tools += row.toolRuns;
    rows.push(row);
  }
  for (const [i, row] of rows.entries()) {
    console.log(
      `  worker ${i + 1}: ${row.modelSteps} model steps, ${row.toolRuns} tool runs, ${row.workflowTasks} workflow tasks`,
    );
  }
  const pg = require('pg');
  const db = new pg.Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  try {
    const { rows: stored } = await db.query(
      `SELECT count(*)::int AS messages, count(DISTINCT (session_id, key))::int AS keys,
              count(*) FILTER (WHERE role = 'assistant')::int AS assistant,
              count(*) FILTER (WHERE role = 'tool')::int AS tool
         FROM messages WHERE session_id = ANY($1)`,
      [ctx.lastIds],
    );
    const s = stored[0];
    const requests = ctx.model.requests.length - ctx.requestsBefore;
    console.log(
      `  expected ${n} model steps and ${n - ctx.opts.concurrent} tool runs: counted ${steps} and ${tools}; ` +
        `model server answered ${requests} requests`,
    );
    console.log(
      `  store: ${s.messages} messages, ${s.keys} distinct keys (duplicates: ${s.messages - s.keys}), ` +
        `${s.assistant} assistant (expected ${n}), ${s.tool} tool results (expected ${n})`,
    );
  } finally {
    await db.end();
  }
}

// ---------------------------------------------------------------------------------------------------

function report(name, runs, workerRss) {
  const goalsPerSecond = runs.map((run) => run.goals / (run.wallMs / 1000));
  const steps = runs.flatMap((run) => run.stepMs);
  console.log(`${name}:`);
  console.log(
    `  wall time (s)          ${spread(
      runs.map((run) => run.wallMs / 1000),
      2,
    )}`,
  );
  console.log(`  goals per second       ${spread(goalsPerSecond, 2)}`);
  console.log(
    `  step latency (ms)      p50 ${fmt(quantile(steps, 0.5), 0)}, p99 ${fmt(quantile(steps, 0.99), 0)} (${steps.length} steps)`,
  );
  console.log(`  worker peak RSS (MB)   ${workerRss.map((mb) => fmt(mb, 0)).join(', ')}`);
  const stepCount = runs[0].goals * runs[0].stepsPerGoal;
  for (const name of Object.keys(runs[0].cpu)) {
    const seconds = runs.map((run) => run.cpu[name]);
    console.log(
      `  CPU of ${name.padEnd(16)} ${spread(seconds, 1)} s, ${fmt((1000 * Math.min(...seconds)) / stepCount, 1)} ms per step (all goals' steps)`,
    );
  }
  return goalsPerSecond;
}

module.exports = { checkSplit, report };
