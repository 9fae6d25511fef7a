#!/usr/bin/env node
/**
 * bench-store-scale: does a goal step's store time grow with the size of the store (issue 20, §4)?
 *
 *   npm run bench:store -- [--steps 40] [--repeat 5] [--sessions 1000] [--events 1000000] [--messages 100000]
 *
 * Needs the compiled dist/, the `temporal` binary and a PostgreSQL server ($DATABASE_URL's, default
 * postgres://root@127.0.0.1:5432/test). It starts a headless Temporal dev server and creates two
 * throwaway databases: `empty`, and `filled` with 1,000 other sessions (1M events, 100k messages, their
 * spool rows and checkpoints, in goalrun's row shapes: scripts/bench/store-fill.js), VACUUM ANALYZEd. All of
 * it is removed at the end. One goal worker per store runs the same scripted goal
 * (scripts/bench/scale-goal.js: a few dozen steps with tools and one auto-compaction), alternating
 * empty and filled, after one warm-up goal on each.
 *
 * Store time is measured where the activities wait for it: each store's SqlClient is wrapped
 * (scripts/bench/timed-sql.js), and the time during which at least one store call of the goal is in
 * flight is divided by its steps. The figure to read: that time on the filled store over the empty
 * one, the median of the run pairs (goal: ≤ 1.2×). On a busy machine it is noisy, so two figures that
 * the machine's load hardly moves stand beside it: the last goal's statements replayed under EXPLAIN
 * (ANALYZE, BUFFERS) on each store (./bench/replay-statements.js: PostgreSQL's execution time and the
 * buffer pages touched, per step and per statement), and pg_stat_statements when the server has it
 * loaded (shared_preload_libraries; a default install has not).
 */
'use strict';

const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { benchArgs, usageError } = require('./bench/args');
const {
  createDatabase,
  fmt,
  fromDist,
  median,
  onCleanup,
  runMain,
  startTemporalServer,
} = require('./bench/support');
const { DEFAULT_FILL, fillStore } = require('./bench/store-fill');
const { replayOnce } = require('./bench/replay-statements');
const { timedSqlClient } = require('./bench/timed-sql');
const { CONTEXT_WINDOW_TOKENS, nextSpoolId, writeScaleScript } = require('./bench/scale-goal');

const NAMESPACE = 'default';
const LIMITS = { maxIterations: 50, maxSteps: 1000, maxMinutes: 60, noProgressLimit: 3 };
const WARMUP_STEPS = 5;
/** The goal of issue 20: the filled store's per-step store time within this factor of the empty one's. */
const TARGET_RATIO = 1.2;
/** Statements shown in the breakdown. */
const TOP_STATEMENTS = 12;
/** Times the last goal's statements are replayed under EXPLAIN ANALYZE on each store. */
const REPLAYS = 5;

function options() {
  const { values } = benchArgs(__filename, {
    options: {
      steps: { type: 'string', default: '40' },
      repeat: { type: 'string', default: '5' },
      sessions: { type: 'string', default: String(DEFAULT_FILL.sessions) },
      events: { type: 'string', default: String(DEFAULT_FILL.events) },
      messages: { type: 'string', default: String(DEFAULT_FILL.messages) },
    },
  });
  const numbers = Object.fromEntries(Object.entries(values).map(([key, value]) => [key, Number(value)]));
  for (const [key, value] of Object.entries(numbers)) {
    if (!Number.isInteger(value) || value < 1) throw usageError(`--${key} must be a positive integer`);
  }
  if (numbers.steps < 10) throw usageError('--steps must be at least 10 (the goal compacts half-way)');
  return numbers;
}

/** pg_stat_statements in this database, or null when the server has not loaded it. */
async function statStatements(client) {
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT pg_stat_statements_reset()');
  } catch {
    return null;
  }
  return {
    reset: () => client.query('SELECT pg_stat_statements_reset()'),
    /** Execution ms of this database's statements since the last reset. */
    async totalMs() {
      const { rows } = await client.query(
        `SELECT coalesce(sum(total_exec_time), 0) AS ms FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND query NOT ILIKE '%pg_stat_statements%'`,
      );
      return Number(rows[0].ms);
    },
  };
}

let runCounter = 0;

/** Runs the scale goal on one side and returns its store figures. */
async function runGoal(ctx, side, steps) {
  const { GoalIterationKey, GoalModelKey, GoalSessionKey, GoalStatusKey, workflowIdOf } =
    fromDist('workflows/definitions.js');
  runCounter += 1;
  const workspace = path.join(ctx.tmp, `ws-${runCounter}`);
  fs.mkdirSync(workspace);
  const sessionId = `scale-${randomBytes(3).toString('hex')}-${runCounter}`;
  // Read beside the goal's store client: only this goal writes to its store while it runs.
  const model = writeScaleScript(ctx.tmp, steps, await nextSpoolId(side.statsClient));
  const goal = {
    sessionId,
    objective: `store benchmark: ${steps} steps`,
    workspace,
    model,
    limits: LIMITS,
    contextWindowTokens: CONTEXT_WINDOW_TOKENS,
  };
  side.sql.reset();
  await side.stats?.reset();
  const started = performance.now();
  const handle = await ctx.client.workflow.start('goalWorkflow', {
    workflowId: workflowIdOf(sessionId),
    taskQueue: side.queue,
    args: [{ goal }],
    typedSearchAttributes: [
      { key: GoalStatusKey, value: 'running' },
      { key: GoalSessionKey, value: sessionId },
      { key: GoalModelKey, value: model.slice(0, 200) },
      { key: GoalIterationKey, value: 0 },
    ],
  });
  const snapshot = await fromDist('cli/goal-result.js').goalResult(handle);
  const ms = performance.now() - started;
  if (snapshot.status !== 'completed' || snapshot.steps !== steps) {
    throw new Error(
      `goal ${sessionId} on the ${side.name} store ended ${snapshot.status} after ${snapshot.steps} steps (expected completed after ${steps}): ${snapshot.reason}`,
    );
  }
  const { record } = side.sql;
  return {
    side: side.name,
    ms,
    steps,
    busyMs: record.busyMs,
    sumMs: record.sumMs,
    calls: record.calls,
    serverMs: side.stats ? await side.stats.totalMs() : null,
    statements: record.statements,
  };
}

/** The median of each run pair's ratio filled/empty of a per-step figure. */
function pairRatios(empty, filled, field) {
  return empty.map((run, i) => filled[i][field] / filled[i].steps / (run[field] / run.steps));
}

function printResults(opts, counts, empty, filled, replay) {
  const perStep = (runs, field) => runs.map((run) => run[field] / run.steps);
  const line = (label, emptyValues, filledValues, digits = 2) => {
    const e = median(emptyValues);
    const f = median(filledValues);
    console.log(
      `  ${label.padEnd(44)} ${fmt(e, digits).padStart(8)} ${fmt(f, digits).padStart(8)} ${fmt(f / e, 2).padStart(7)}×`,
    );
  };
  console.log('');
  console.log(
    `filled store: ${counts.sessions} sessions, ${counts.events} events, ${counts.messages} messages, ` +
      `${counts.spool} spool rows, ${counts.checkpoints} checkpoints (VACUUM ANALYZEd)`,
  );
  console.log(
    `goal: ${opts.steps} steps (todo-write, file-write/read/edit, bash with a spooled output read back, glob, grep; one auto-compaction), ${empty.length} runs per store, interleaved`,
  );
  console.log(`  median per step                                 empty   filled   ratio`);
  line('store time, calls in flight (ms)', perStep(empty, 'busyMs'), perStep(filled, 'busyMs'));
  line('store time, sum of calls (ms)', perStep(empty, 'sumMs'), perStep(filled, 'sumMs'));
  line('store calls', perStep(empty, 'calls'), perStep(filled, 'calls'), 1);
  line('goal wall time (ms)', perStep(empty, 'ms'), perStep(filled, 'ms'), 1);
  if (empty[0].serverMs !== null) {
    line(
      'PostgreSQL execution, pg_stat_statements (ms)',
      perStep(empty, 'serverMs'),
      perStep(filled, 'serverMs'),
      3,
    );
  } else {
    console.log('  (pg_stat_statements is not loaded on this server)');
  }
  const ratios = pairRatios(empty, filled, 'busyMs');
  console.log(`  store-time ratio of each run pair: ${ratios.map((r) => fmt(r, 2)).join(', ')}`);
  const replayLine = (label, field, digits) =>
    line(
      label,
      replay.map((rep) => rep.empty[field] / rep.empty.steps),
      replay.map((rep) => rep.filled[field] / rep.filled.steps),
      digits,
    );
  console.log(`the last goal's statements replayed under EXPLAIN ANALYZE, ${replay.length} times each:`);
  replayLine('PostgreSQL execution (ms)', 'executionMs', 3);
  replayLine('planning (ms)', 'planningMs', 3);
  replayLine('buffer pages touched', 'pages', 1);
  const ratio = median(ratios);
  console.log(
    `RESULT: per-step store time ${fmt(median(perStep(empty, 'busyMs')))} ms empty, ${fmt(median(perStep(filled, 'busyMs')))} ms filled: ` +
      `${fmt(ratio, 2)}× (median of the run pairs; goal ≤ ${TARGET_RATIO}×) ${ratio <= TARGET_RATIO ? 'within the goal' : 'OVER the goal'}`,
  );

  // Which statements grow: PostgreSQL's execution time and pages per call, from the replays.
  const merged = (side) => {
    const byKey = new Map();
    for (const rep of replay) {
      for (const [key, entry] of rep[side].byStatement) {
        const sum = byKey.get(key) ?? { count: 0, executionMs: 0, pages: 0 };
        sum.count += entry.count;
        sum.executionMs += entry.executionMs;
        sum.pages += entry.pages;
        byKey.set(key, sum);
      }
    }
    return byKey;
  };
  const emptyStatements = merged('empty');
  const rows = [...merged('filled').entries()]
    .map(([key, f]) => ({ key, f, e: emptyStatements.get(key) }))
    .sort((a, b) => b.f.executionMs - a.f.executionMs)
    .slice(0, TOP_STATEMENTS);
  console.log(
    'statements, most PostgreSQL time on the filled store first (per call: ms empty | filled, pages empty | filled):',
  );
  for (const { key, f, e } of rows) {
    const per = (entry, field) => (entry ? entry[field] / entry.count : Number.NaN);
    console.log(
      `  ${fmt(per(e, 'executionMs'), 3).padStart(7)} | ${fmt(per(f, 'executionMs'), 3).padStart(7)} ms ` +
        `${fmt(per(e, 'pages'), 1).padStart(6)} | ${fmt(per(f, 'pages'), 1).padStart(6)} pages  ${key.slice(0, 100)}`,
    );
  }
}

/** Replays each side's last goal `times` times, the sides interleaved. */
async function replayStatements(sides, lastRuns, times) {
  const { Client } = require('pg');
  const clients = {};
  for (const side of sides) {
    clients[side.name] = new Client({ connectionString: side.db.url });
    await clients[side.name].connect();
  }
  try {
    const replays = [];
    for (let i = 0; i < times; i++) {
      const rep = {};
      for (const side of sides) {
        const run = lastRuns[side.name];
        rep[side.name] = { ...(await replayOnce(clients[side.name], run.statements)), steps: run.steps };
      }
      replays.push(rep);
    }
    return replays;
  } finally {
    for (const client of Object.values(clients)) await client.end();
  }
}

async function main() {
  const opts = options();
  const totalStarted = performance.now();
  const { createGoalWorker, installWorkerLogging } = fromDist('worker/worker.js');
  const { createPgClient } = fromDist('store/sql.js');
  const { migrate } = fromDist('store/migrations.js');
  const { SqlSessionStore } = fromDist('store/sql-store.js');
  const { Client, Connection } = require('@temporalio/client');
  const { NativeConnection } = require('@temporalio/worker');
  installWorkerLogging({ level: 'warn' });

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-bench-store-'));
  onCleanup('remove temp dir', () => fs.rmSync(tmp, { recursive: true, force: true }));
  const server = await startTemporalServer({ tuned: true });
  const workerConnection = await NativeConnection.connect({ address: server.address });
  onCleanup('close worker connection', () => workerConnection.close());
  const clientConnection = await Connection.connect({ address: server.address });
  onCleanup('close client connection', () => clientConnection.close());
  const client = new Client({ connection: clientConnection, namespace: NAMESPACE });

  const sides = [];
  for (const name of ['empty', 'filled']) {
    const db = await createDatabase();
    const sql = timedSqlClient(createPgClient(db.url), { capture: true });
    onCleanup(`close the ${name} store`, () => sql.close());
    await migrate(sql);
    sides.push({ name, db, sql, queue: `bench-store-${name}-${randomBytes(4).toString('hex')}` });
  }
  const [emptySide, filledSide] = sides;
  console.log(
    `temporal dev server ${server.address}, databases ${emptySide.db.name} (empty) and ${filledSide.db.name} (filled), node ${process.version}`,
  );

  const fillStarted = performance.now();
  const filler = createPgClient(filledSide.db.url);
  const counts = await fillStore(filler, {
    sessions: opts.sessions,
    events: opts.events,
    messages: opts.messages,
    onProgress: (done, total) =>
      process.stdout.write(
        `\rfilling: ${done} of ${total} sessions (${fmt((performance.now() - fillStarted) / 1000)} s)`,
      ),
  });
  await filler.close();
  console.log(`\nfilled in ${fmt((performance.now() - fillStarted) / 1000)} s`);

  for (const side of sides) {
    // Its own connection: the statistics' queries are not the goal's store time.
    const statsClient = createPgClient(side.db.url);
    onCleanup(`close the ${side.name} statistics connection`, () => statsClient.close());
    side.statsClient = statsClient;
    side.stats = await statStatements(statsClient);
    const worker = await createGoalWorker({
      connection: workerConnection,
      namespace: NAMESPACE,
      taskQueue: side.queue,
      store: new SqlSessionStore(side.sql),
      providerEnv: {},
    });
    const running = worker.run();
    onCleanup(`stop the ${side.name} worker`, async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    running.catch((error) => {
      console.error(`${side.name} worker failed: ${error.message}`);
      process.kill(process.pid, 'SIGTERM');
    });
  }

  const ctx = { client, tmp };
  for (const side of sides) await runGoal(ctx, side, WARMUP_STEPS);
  const runs = { empty: [], filled: [] };
  for (let i = 0; i < opts.repeat; i++) {
    // Alternating which side goes first, so that a slow patch of the machine hurts both alike.
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const run = await runGoal(ctx, side, opts.steps);
      runs[side.name].push(run);
      console.log(
        `run ${i + 1} ${side.name.padEnd(6)}: ${fmt(run.busyMs / run.steps, 2)} ms store time per step, ${fmt(run.ms / run.steps, 1)} ms per step`,
      );
    }
  }
  const replay = await replayStatements(
    sides,
    { empty: runs.empty.at(-1), filled: runs.filled.at(-1) },
    REPLAYS,
  );
  printResults(opts, counts, runs.empty, runs.filled, replay);
  console.log(`\nbenchmark took ${fmt((performance.now() - totalStarted) / 1000)} s (cleanup follows)`);
}

runMain(main);
