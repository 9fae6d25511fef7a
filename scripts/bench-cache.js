#!/usr/bin/env node
/**
 * bench-cache: how much of a long goal's input a provider's prompt cache can serve, with the request
 * layout before 0.3.0 (the task list in the system prompt) and today's (the task list after the
 * transcript), in the same run.
 *
 *   npm run bench:cache -- [--steps 100]        (--steps 4 is the CI smoke size)
 *
 * Needs the compiled dist/, the `temporal` binary and a PostgreSQL server; it starts its own dev
 * server and a throwaway database (scripts/bench/support.js) and removes both at the end. The model
 * is the test suite's OpenAI-compatible server (real HTTP and SSE) with its simulated prefix cache:
 * the leading blocks of a request (tool schemas, then each message) that an earlier request began
 * with count as cache reads, as a provider's prefix cache does. Each goal takes --steps model steps:
 * a file read every step (eight files in turn), a todo-write with it every TODO_EVERY steps (the plan moves on), then
 * `finish`. The worker runs the goal once per layout (GOALRUN_PROMPT_LAYOUT), each on a fresh cache,
 * and the script prints the cache-read share of the model steps' input for each and their ratio. It
 * asserts nothing, except that each goal completed with the expected step count.
 */
'use strict';

const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { benchArgs, usageError } = require('./bench/args');
const { createDatabase, fmt, fromDist, onCleanup, runMain, startTemporalServer } = require('./bench/support');
const { loadTestServer } = require('./bench/model-server');

const NAMESPACE = 'default';
// A model with a card (its window, its caching minimum); the requests go to the test server all the same.
const MODEL = 'openai:gpt-4o-mini';
const LIMITS = { maxIterations: 50, maxSteps: 10_000, maxMinutes: 120, noProgressLimit: 3 };
/** A todo-write every this many steps: agents revise their plan often. */
const TODO_EVERY = 3;
const TASKS = 6;
/** Files the goal reads in turn, each a few hundred tokens, as source files are. */
const FILES = 8;
const LAYOUTS = ['tasks-in-system', 'stable-prefix'];

function options() {
  const { values } = benchArgs(__filename, { options: { steps: { type: 'string', default: '100' } } });
  const steps = Number(values.steps);
  if (!Number.isInteger(steps) || steps < 2) throw usageError('--steps must be an integer >= 2');
  return { steps };
}

/**
 * The todo-write of step `step`: every one moves the plan on by a task (the next one in progress,
 * the one before it done), and a finished plan starts the next phase, as an agent's list changes.
 */
function todoWrite(step) {
  const writes = Math.floor(step / TODO_EVERY);
  const done = writes % TASKS;
  const phase = Math.floor(writes / TASKS) + 1;
  const todos = Array.from({ length: TASKS }, (_, i) => ({
    id: `task-${i + 1}`,
    content: `phase ${phase}, part ${i + 1} of the work`,
    status: i < done ? 'completed' : i === done ? 'in_progress' : 'pending',
  }));
  return { name: 'todo-write', args: { todos } };
}

/** The model: a file read per step (with a todo-write every TODO_EVERY steps), then finish. */
function turnFor(body, steps, requestStep, isSummaryRequest) {
  if (isSummaryRequest(body)) return { text: 'Summary: the goal read the notes, one file a step.' };
  const step = requestStep(body);
  if (step >= steps) {
    return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'benchmark done' } }] };
  }
  // A different file each step: the runaway breaker pauses a goal that repeats one call and answer.
  const read = { name: 'file-read', args: { path: `notes-${step % FILES}.txt` } };
  const calls = step % TODO_EVERY === 1 ? [todoWrite(step), read] : [read];
  return { text: `Step ${step}: reading the notes again.`, toolCalls: calls };
}

let runCounter = 0;

/** Runs one goal with the layout, on a fresh simulated cache; returns its cache figures. */
async function runGoal(ctx, layout) {
  const { GoalModelKey, GoalSessionKey, GoalStatusKey, workflowIdOf } = fromDist('workflows/definitions.js');
  const { isSummaryRequest, requestStep, startOpenAITestServer } = ctx.testServer;
  const server = await startOpenAITestServer({
    promptCache: {},
    fallback: (body) => turnFor(body, ctx.steps, requestStep, isSummaryRequest),
  });
  process.env.GOALRUN_PROMPT_LAYOUT = layout;
  runCounter += 1;
  const sessionId = `bench-cache-${randomBytes(3).toString('hex')}-${runCounter}`;
  const goal = {
    sessionId,
    objective: `benchmark: ${ctx.steps} steps that read the notes and keep a task list`,
    workspace: ctx.workspace,
    model: MODEL,
    baseUrl: server.url,
    limits: LIMITS,
  };
  try {
    const handle = await ctx.client.workflow.start('goalWorkflow', {
      workflowId: workflowIdOf(sessionId),
      taskQueue: ctx.taskQueue,
      args: [{ goal }],
      typedSearchAttributes: [
        { key: GoalStatusKey, value: 'running' },
        { key: GoalSessionKey, value: sessionId },
        { key: GoalModelKey, value: MODEL },
      ],
    });
    const snapshot = await fromDist('cli/goal-result.js').goalResult(handle);
    if (snapshot.status !== 'completed' || snapshot.steps !== ctx.steps) {
      throw new Error(
        `goal ${sessionId} ended ${snapshot.status} after ${snapshot.steps} steps (expected completed after ${ctx.steps}): ${snapshot.reason}`,
      );
    }
    // The model steps' requests (the summarizer's, offered no tools, are not steps).
    const steps = server.requests
      .map((request, i) => ({ request, usage: server.cacheUsage[i] }))
      .filter(({ request }) => !isSummaryRequest(request.body));
    const prompt = steps.reduce((sum, { usage }) => sum + usage.promptTokens, 0);
    const read = steps.reduce((sum, { usage }) => sum + usage.cachedTokens, 0);
    // Requests that read less than half their input from the cache: the prefix broke before them.
    const misses = steps.filter(({ usage }) => usage.cachedTokens < usage.promptTokens / 2).length;
    return {
      layout,
      requests: steps.length,
      summaries: server.requests.length - steps.length,
      prompt,
      read,
      misses,
      share: prompt > 0 ? read / prompt : 0,
    };
  } finally {
    await server.close();
  }
}

function printResults(steps, runs) {
  const [before, after] = runs;
  const row = (cells) => cells.map((cell, i) => (i === 0 ? cell.padEnd(18) : cell.padStart(12))).join(' ');
  console.log('');
  console.log(`goal: ${steps} model steps (a todo-write every ${TODO_EVERY}), simulated prefix cache`);
  console.log('(misses: requests that read under half their input from the cache)');
  console.log(row(['layout', 'requests', 'input tok', 'cache read', 'read share', 'misses']));
  for (const run of runs) {
    console.log(
      row([
        run.layout,
        String(run.requests),
        String(run.prompt),
        String(run.read),
        `${fmt(run.share * 100, 1)}%`,
        String(run.misses),
      ]),
    );
  }
  const uncachedBefore = before.prompt - before.read;
  const uncachedAfter = after.prompt - after.read;
  console.log(
    `cache-read share: ${fmt(before.share * 100, 1)}% before, ${fmt(after.share * 100, 1)}% after; ` +
      `uncached input ${fmt(uncachedAfter > 0 ? uncachedBefore / uncachedAfter : 0, 1)}x smaller`,
  );
  if (before.summaries + after.summaries > 0) {
    console.log(
      `(compactions ran: ${before.summaries} summarizer requests before, ${after.summaries} after)`,
    );
  }
}

async function main() {
  const opts = options();
  const totalStarted = performance.now();
  const { createGoalWorker, installWorkerLogging } = fromDist('worker/worker.js');
  const { openStore } = fromDist('store/open.js');
  const { Client, Connection } = require('@temporalio/client');
  const { NativeConnection } = require('@temporalio/worker');
  installWorkerLogging({ level: 'warn' });
  const testServer = loadTestServer();

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-bench-cache-'));
  onCleanup('remove temp dir', () => fs.rmSync(tmp, { recursive: true, force: true }));
  const workspace = path.join(tmp, 'workspace');
  fs.mkdirSync(workspace);
  for (let i = 0; i < FILES; i++) {
    const lines = Array.from({ length: 40 }, (_, n) => `note ${i}.${n}: something the goal reads, line ${n}`);
    fs.writeFileSync(path.join(workspace, `notes-${i}.txt`), `${lines.join('\n')}\n`);
  }

  const server = await startTemporalServer();
  const db = await createDatabase();
  console.log(
    `temporal dev server ${server.address}, database ${db.name}, steps=${opts.steps}, node ${process.version}`,
  );
  const store = await openStore({ databaseUrl: db.url, home: tmp });
  onCleanup('close store', () => store.close());
  const workerConnection = await NativeConnection.connect({ address: server.address });
  onCleanup('close worker connection', () => workerConnection.close());
  const clientConnection = await Connection.connect({ address: server.address });
  onCleanup('close client connection', () => clientConnection.close());
  const client = new Client({ connection: clientConnection, namespace: NAMESPACE });

  const taskQueue = `bench-cache-${randomBytes(4).toString('hex')}`;
  // Each goal names its own model server (--base-url), so each run starts on an empty cache.
  const providerEnv = { OPENAI_API_KEY: 'sk-bench-not-a-secret' };
  const worker = await createGoalWorker({
    connection: workerConnection,
    namespace: NAMESPACE,
    taskQueue,
    store,
    providerEnv,
  });
  const running = worker.run();
  onCleanup('stop worker', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  });
  running.catch((error) => {
    console.error(`worker failed: ${error.message}`);
    process.kill(process.pid, 'SIGTERM');
  });

  const ctx = { client, taskQueue, workspace, steps: opts.steps, testServer };
  const runs = [];
  for (const layout of LAYOUTS) runs.push(await runGoal(ctx, layout));
  printResults(opts.steps, runs);
  console.log(`\nbenchmark took ${fmt((performance.now() - totalStarted) / 1000)} s (cleanup follows)`);
}

runMain(main);
