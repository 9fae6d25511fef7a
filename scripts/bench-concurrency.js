#!/usr/bin/env node
/**
 * bench-concurrency: many goals at once on one worker, next to the same number of bare workflows
 * running the same activities (the floor).
 *
 *   npm run bench -- --concurrent 200 [--steps 5] [--delay-ms 200] [--tool file-read|bash]
 *                    [--workers 1|2] [--repeat 1] [--warmup 1] [--server goalrun|default] [--no-floor]
 *                    [--floor-io]
 *
 * Starts its own headless Temporal dev server, a throwaway PostgreSQL database and a local
 * OpenAI-compatible model (the test suite's server) that answers every request after --delay-ms:
 * a cheap tool call (--tool: file-read of a small file, or bash `echo <step>`; scripts/bench/cheap-calls.js)
 * for steps 1..N-1, then `finish`. Then, per round:
 *
 *   goals: N goals started at once through the client API, run by --workers `goalrun worker`
 *          processes (the built CLI, on one task queue, each with --metrics-port);
 *   floor: N workflows that run the same normal activities (a model activity sleeping --delay-ms,
 *          then a no-op tool activity, per step) on one worker process with the same tuning;
 *   I/O floor (--floor-io): N workflows whose steps do the I/O a goal step cannot avoid, and nothing
 *          of goalrun: a streamed request to the same model, a file read, two rows written
 *          (scripts/bench/floor-io-activities.js). What a goal costs beyond it is goalrun's own work.
 *
 * Prints for each: the wall time until all N are done, goals per second, p50 and p99 step latency
 * (from one model step's scheduling to the next one's, from the histories), and the worker's peak
 * RSS (VmHWM); then goals/s as a share of the floor's. With two workers it shows how the work was
 * split (each worker's counters) and that nothing ran twice (model requests, activities and stored
 * messages against the expected counts). It asserts nothing but that every goal completed.
 */
'use strict';

const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { benchArgs, usageError } = require('./bench/args');
const { CHEAP_TOOLS, cheapCall, writeNotes } = require('./bench/cheap-calls');
const { startModelServer } = require('./bench/model-server');
const { checkSplit, report } = require('./bench/concurrency-report');
const { diagnose, scrape, startProcess, withCpu } = require('./bench/processes');
const {
  createDatabase,
  DIST,
  findFreePort,
  fmt,
  fromDist,
  onCleanup,
  runMain,
  spread,
  startTemporalServer,
} = require('./bench/support');

const NAMESPACE = 'default';
const MODEL = 'openai-compatible:bench-model';
const LIMITS = { maxIterations: 50, maxSteps: 1000, maxMinutes: 60, noProgressLimit: 1000 };
const HISTORY_FETCH_CONCURRENCY = 20;

function options() {
  const { values } = benchArgs(__filename, {
    options: {
      concurrent: { type: 'string' },
      steps: { type: 'string', default: '5' },
      'delay-ms': { type: 'string', default: '200' },
      workers: { type: 'string', default: '1' },
      repeat: { type: 'string', default: '1' },
      warmup: { type: 'string', default: '1' },
      server: { type: 'string', default: 'goalrun' },
      'no-floor': { type: 'boolean', default: false },
      'floor-io': { type: 'boolean', default: false },
      tool: { type: 'string', default: 'file-read' },
    },
  });
  const n = (name, min) => {
    const value = Number(values[name]);
    if (!Number.isInteger(value) || value < min) throw usageError(`--${name} must be an integer >= ${min}`);
    return value;
  };
  if (values.server !== 'goalrun' && values.server !== 'default')
    throw usageError('--server must be goalrun or default');
  if (!CHEAP_TOOLS.includes(values.tool)) throw usageError(`--tool must be one of ${CHEAP_TOOLS.join(', ')}`);
  return {
    tool: values.tool,
    concurrent: n('concurrent', 1),
    steps: n('steps', 2),
    delayMs: n('delay-ms', 0),
    workers: n('workers', 1),
    repeat: n('repeat', 1),
    warmup: n('warmup', 0),
    server: values.server,
    floor: !values['no-floor'],
    floorIo: values['floor-io'],
  };
}

// ---------------------------------------------------------------------------------------------------
// Worker processes.

/** A `goalrun worker` process of the built CLI, serving metrics on a port of its own. */
async function startGoalWorker(ctx, index) {
  const metricsPort = await findFreePort();
  const env = {
    ...process.env,
    GOALRUN_HOME: ctx.tmp,
    DATABASE_URL: ctx.databaseUrl,
    TEMPORAL_ADDRESS: ctx.temporalAddress,
    GOALRUN_TASK_QUEUE: ctx.goalQueue,
  };
  // BENCH_WORKER_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) profiles the goal workers.
  const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const args = [
    ...nodeArgs,
    path.join(DIST, 'cli/main.js'),
    'worker',
    '--log-level',
    'warn',
    '--metrics-port',
    String(metricsPort),
  ];
  const worker = await startProcess(`goal worker ${index}`, args, env, 'metrics on');
  return { ...worker, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
}

// ---------------------------------------------------------------------------------------------------
// Running N goals, or N floor workflows, at once.

async function runGoals(ctx, round) {
  const { workflowIdOf } = fromDist('workflows/definitions.js');
  // Started as `goalrun start` starts a goal: the same summary, details and search attributes.
  const { goalStartMetadata } = fromDist('workflows/goal-start-metadata.js');
  const ids = Array.from({ length: ctx.opts.concurrent }, (_, i) => `bench-${ctx.suffix}-r${round}-${i}`);
  const started = performance.now();
  const handles = await Promise.all(
    ids.map((sessionId) => {
      const goal = {
        sessionId,
        objective: 'benchmark: a few cheap tool calls, then finish',
        workspace: ctx.workspace,
        model: MODEL,
        baseUrl: ctx.model.url,
        limits: LIMITS,
      };
      return ctx.client.workflow.start('goalWorkflow', {
        workflowId: workflowIdOf(sessionId),
        taskQueue: ctx.goalQueue,
        args: [{ goal }],
        ...goalStartMetadata(goal),
      });
    }),
  );
  const { goalResult } = fromDist('cli/goal-result.js');
  // A blocked or failed goal fails its workflow; goalResult reads its snapshot from the failure.
  const results = await Promise.all(handles.map((handle) => goalResult(handle)));
  const wallMs = performance.now() - started;
  for (const [i, snapshot] of results.entries()) {
    if (snapshot.status !== 'completed' || snapshot.steps !== ctx.opts.steps) {
      throw new Error(
        `goal ${ids[i]} ended ${snapshot.status} after ${snapshot.steps} steps: ${snapshot.reason}`,
      );
    }
  }
  const events = {};
  const stepMs = await stepLatencies(handles, 'modelStep', events);
  // BENCH_PRINT_HISTORY=1 prints the first goal's events in order with their sizes (what each step writes).
  if (process.env.BENCH_PRINT_HISTORY === '1') await printHistory(handles[0]);
  return { wallMs, ids, handles, stepMs, events };
}

/** N floor workflows at once: the bare floor, or with `io` the I/O floor. */
async function runFloor(ctx, round, io = false) {
  const started = performance.now();
  const handles = await Promise.all(
    Array.from({ length: ctx.opts.concurrent }, (_, i) =>
      ctx.client.workflow.start(io ? 'floorIoWorkflow' : 'floorWorkflow', {
        workflowId: `floor${io ? '-io' : ''}-${ctx.suffix}-r${round}-${i}`,
        taskQueue: ctx.floorQueue,
        args: io ? [ctx.opts.steps] : [ctx.opts.steps, ctx.opts.delayMs],
      }),
    ),
  );
  await Promise.all(handles.map((handle) => handle.result()));
  const wallMs = performance.now() - started;
  if (io) await checkFloorRows(ctx, handles);
  const events = {};
  const stepMs = await stepLatencies(handles, io ? 'modelIo' : 'model', events);
  return { wallMs, handles, stepMs, events };
}

/** The I/O floor did its writes: a row per model answer and per tool result, none twice. */
async function checkFloorRows(ctx, handles) {
  const { countFloorRows } = require('./bench/floor-io-activities');
  const ids = handles.map((handle) => handle.workflowId);
  const rows = await countFloorRows(ctx.databaseUrl, ids);
  const expected = ids.length * (2 * ctx.opts.steps - 1);
  if (rows !== expected) throw new Error(`the I/O floor wrote ${rows} rows, expected ${expected}`);
}

/**
 * Step latencies: from each model activity's scheduling to the next one's, over every workflow. Counts
 * the histories' events by type into `events` (what the server writes per goal, against the floor's).
 */
async function stepLatencies(handles, modelActivity, events) {
  const { temporal } = require('@temporalio/proto');
  const scheduled = temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED;
  const latencies = [];
  for (let i = 0; i < handles.length; i += HISTORY_FETCH_CONCURRENCY) {
    const histories = await Promise.all(
      handles.slice(i, i + HISTORY_FETCH_CONCURRENCY).map((handle) => handle.fetchHistory()),
    );
    for (const history of histories) {
      for (const event of history.events) {
        const type = temporal.api.enums.v1.EventType[event.eventType] ?? String(event.eventType);
        events[type] = (events[type] ?? 0) + 1;
      }
      const times = history.events
        .filter(
          (event) =>
            event.eventType === scheduled &&
            event.activityTaskScheduledEventAttributes.activityType?.name === modelActivity,
        )
        .map((event) => Number(event.eventTime.seconds) * 1000 + event.eventTime.nanos / 1e6);
      for (let k = 1; k < times.length; k++) latencies.push(times[k] - times[k - 1]);
    }
  }
  return latencies;
}

/** One workflow's events in order: type, and the activity or the search attributes it names. */
async function printHistory(handle) {
  const { temporal } = require('@temporalio/proto');
  const { defaultPayloadConverter } = require('@temporalio/common');
  const history = await handle.fetchHistory();
  const activities = new Map();
  for (const event of history.events) {
    const type = temporal.api.enums.v1.EventType[event.eventType].replace(/^EVENT_TYPE_/, '').toLowerCase();
    let detail = '';
    if (event.activityTaskScheduledEventAttributes) {
      detail = event.activityTaskScheduledEventAttributes.activityType?.name ?? '';
      activities.set(String(event.eventId), detail);
    } else if (event.activityTaskCompletedEventAttributes) {
      detail = activities.get(String(event.activityTaskCompletedEventAttributes.scheduledEventId)) ?? '';
    } else if (event.markerRecordedEventAttributes) {
      const data = event.markerRecordedEventAttributes.details?.data?.payloads?.[0];
      // Core writes a local activity's marker data in snake case.
      const marker = data ? defaultPayloadConverter.fromPayload(data) : null;
      detail = marker?.activity_type ?? marker?.id ?? '';
    } else if (event.upsertWorkflowSearchAttributesEventAttributes) {
      const fields =
        event.upsertWorkflowSearchAttributesEventAttributes.searchAttributes?.indexedFields ?? {};
      detail = Object.entries(fields)
        .map(([key, payload]) => `${key}=${JSON.stringify(defaultPayloadConverter.fromPayload(payload))}`)
        .join(' ');
    }
    // Its encoded size: what the server stores and every worker decodes for it.
    const bytes = temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    console.log(`  ${String(event.eventId).padStart(3)} ${type} ${detail} (${bytes} bytes)`);
  }
}

/** History events per workflow by type, from the last round. */
function printEvents(label, rounds, count) {
  const events = rounds.at(-1)?.events ?? {};
  const total = Object.values(events).reduce((sum, n) => sum + n, 0);
  const parts = Object.entries(events)
    .sort((a, b) => b[1] - a[1])
    .map(([type, n]) => `${type.replace(/^EVENT_TYPE_/, '').toLowerCase()} ${fmt(n / count, 1)}`);
  console.log(`  history events per workflow (${label}): ${fmt(total / count, 1)}: ${parts.join(', ')}`);
}

async function main() {
  const opts = options();
  const { Client, Connection } = require('@temporalio/client');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-concurrency-'));
  onCleanup('remove temp dir', () => fs.rmSync(tmp, { recursive: true, force: true }));
  const workspace = path.join(tmp, 'workspace');
  fs.mkdirSync(workspace);
  writeNotes(workspace, opts.steps);

  const server = await startTemporalServer({ tuned: opts.server === 'goalrun' });
  const db = await createDatabase();
  const model = await startModelServer({
    steps: opts.steps,
    delayMs: opts.delayMs,
    tool: (step) => cheapCall(opts.tool, step),
  });
  onCleanup('stop model server', () => model.close());
  const connection = await Connection.connect({ address: server.address });
  onCleanup('close client connection', () => connection.close());
  const suffix = randomBytes(3).toString('hex');
  const ctx = {
    opts,
    tmp,
    workspace,
    suffix,
    model,
    client: new Client({ connection, namespace: NAMESPACE }),
    databaseUrl: db.url,
    temporalAddress: server.address,
    goalQueue: `bench-goals-${suffix}`,
    floorQueue: `bench-floor-${suffix}`,
  };
  const workers = [];
  for (let i = 1; i <= opts.workers; i++) workers.push(await startGoalWorker(ctx, i));
  // The I/O floor's activities need the model, the database and the notes too.
  const floorIoArgs = opts.floorIo ? [model.url, db.url, workspace] : [];
  const floorWorker =
    opts.floor || opts.floorIo
      ? await startProcess(
          'floor worker',
          [path.join(__dirname, 'bench/floor-worker.js'), server.address, ctx.floorQueue, ...floorIoArgs],
          process.env,
          'floor worker running',
        )
      : null;
  console.log(
    `temporal ${server.address} (${opts.server} config), database ${db.name}, model ${model.url} ` +
      `(answers after ${opts.delayMs} ms); ${opts.concurrent} goals of ${opts.steps} steps (tool ${opts.tool}) at once, ` +
      `${opts.workers} goal worker(s), ${opts.repeat} round(s) after ${opts.warmup} warm-up round(s), ${os.cpus().length} CPUs, node ${process.version}`,
  );

  /** Each process's CPU seconds in one round, so that a warming worker shows round by round. */
  const cpuLine = (cpu) =>
    Object.entries(cpu)
      .map(([name, seconds]) => `${name} ${fmt(seconds, 1)} s`)
      .join(', ');
  // Unreported rounds first: a worker that runs for hours has compiled its hot code long ago, and
  // the goal worker has several times the floor's code to compile (V8's optimizing compiler took a
  // sixth of its CPU in a first round), so a cold round measures the JIT more than the step.
  for (let round = 1 - opts.warmup; round <= 0; round++) {
    const run = await withCpu(
      Object.fromEntries(workers.map((worker, i) => [`worker ${i + 1}`, worker.child.pid])),
      () => runGoals(ctx, round),
    );
    console.log(
      `warm-up round ${round}: goals ${fmt(run.wallMs / 1000, 2)} s (CPU: ${cpuLine(run.cpu)}), not reported`,
    );
    for (const io of [opts.floor ? false : null, opts.floorIo ? true : null]) {
      if (io === null) continue;
      const floor = await withCpu({ 'floor worker': floorWorker.child.pid }, () => runFloor(ctx, round, io));
      console.log(
        `warm-up round ${round}: ${io ? 'I/O floor' : 'floor'} ${fmt(floor.wallMs / 1000, 2)} s (CPU: ${cpuLine(floor.cpu)}), not reported`,
      );
    }
  }
  const goals = [];
  const floors = [];
  const ioFloors = [];
  for (let round = 1; round <= opts.repeat; round++) {
    const before = await Promise.all(workers.map((worker) => scrape(worker.metricsUrl)));
    ctx.requestsBefore = model.requests.length;
    const goalPids = Object.fromEntries(workers.map((worker, i) => [`worker ${i + 1}`, worker.child.pid]));
    const run = await withCpu({ ...goalPids, 'temporal server': server.pid }, () => runGoals(ctx, round));
    ctx.lastIds = run.ids;
    goals.push({ ...run, goals: opts.concurrent, stepsPerGoal: opts.steps });
    console.log(`round ${round}: goals ${fmt(run.wallMs / 1000, 2)} s (CPU: ${cpuLine(run.cpu)})`);
    if (opts.workers > 1) {
      console.log('work split between the workers (this round):');
      await checkSplit(ctx, workers, before);
    }
    for (const [io, runs] of [
      [false, opts.floor ? floors : null],
      [true, opts.floorIo ? ioFloors : null],
    ]) {
      if (!runs) continue;
      const floor = await withCpu(
        { 'floor worker': floorWorker.child.pid, 'temporal server': server.pid },
        () => runFloor(ctx, round, io),
      );
      runs.push({ ...floor, goals: opts.concurrent, stepsPerGoal: opts.steps });
      console.log(
        `round ${round}: ${io ? 'I/O floor' : 'floor'} ${fmt(floor.wallMs / 1000, 2)} s (CPU: ${cpuLine(floor.cpu)})`,
      );
    }
  }
  console.log('');
  const goalRate = report(
    `${opts.concurrent} goals`,
    goals,
    workers.map((worker) => worker.peakRssMb()),
  );
  printEvents(`${opts.concurrent} goals`, goals, opts.concurrent);
  for (const [i, worker] of workers.entries())
    await diagnose(
      worker,
      `worker ${i + 1}`,
      opts.workers === 1 ? opts.concurrent * (opts.repeat + opts.warmup) : 0,
    );
  for (const [label, runs] of [
    ['floor', floors],
    ['I/O floor', ioFloors],
  ]) {
    if (runs.length === 0) continue;
    // The worker's peak RSS covers both floors when both ran: they share one process.
    const floorRate = report(`${opts.concurrent} ${label} workflows`, runs, [floorWorker.peakRssMb()]);
    printEvents(`${opts.concurrent} ${label} workflows`, runs, opts.concurrent);
    const shares = goalRate.map((rate, i) => (100 * rate) / floorRate[i]);
    console.log(`goals per second as a share of the ${label}'s (each round): ${spread(shares, 0)} %`);
  }
}

runMain(main);
