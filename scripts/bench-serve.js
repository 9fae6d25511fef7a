#!/usr/bin/env node
/**
 * bench-serve: how long `goalrun serve` takes to list the store's goals (issue 28: "20 goals listed in
 * under 300 ms on the embedded store"). A figure, not an assertion.
 *
 *   node scripts/bench-serve.js [--goals 20] [--requests 30]
 *
 * Needs the compiled dist/. Opens a throwaway embedded store (GOALRUN_HOME in a temp directory, no
 * DATABASE_URL), writes N session rows, serves them with serve's own HTTP server in this process, and
 * times GET /api/goals (the page's list and each live refresh) and GET / (the page). Prints the median
 * and the slowest of each, then removes the store.
 */
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { benchArgs } = require('./bench/args');

const dist = (file) => require(path.join(__dirname, '..', 'dist', file));

async function main() {
  const { values } = benchArgs(__filename, {
    options: { goals: { type: 'string', default: '20' }, requests: { type: 'string', default: '30' } },
  });
  const goals = Number(values.goals);
  const requests = Number(values.requests);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-bench-serve-'));
  const { openStore } = dist('store/open.js');
  const { stopEmbeddedStore } = dist('store/embedded-server.js');
  const { createServeServer } = dist('cli/serve/serve-server.js');
  const opened = performance.now();
  const store = await openStore({ home });
  console.log(`embedded store opened in ${Math.round(performance.now() - opened)} ms`);
  const server = createServeServer({
    token: 'a'.repeat(48),
    store,
    transcript: async () => '',
    webUiUrl: () => null,
  });
  try {
    for (let i = 0; i < goals; i++) {
      const id = `0123456789ab-20261203T${String(100000000 + i).padStart(9, '0')}Z`;
      await store.createSession({
        id,
        projectDir: '/tmp/bench',
        projectHash: '0123456789ab',
        objective: `goal ${i}: a task the bench made`,
        model: 'openai:gpt-4o-mini',
        workflowId: `goal-${id}`,
      });
    }
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${server.address().port}`;
    const headers = { Authorization: `Bearer ${'a'.repeat(48)}` };
    for (const [what, url] of [
      ['GET /api/goals', `${base}/api/goals`],
      ['GET / (the page)', `${base}/`],
    ]) {
      const times = [];
      for (let i = 0; i < requests; i++) {
        const started = performance.now();
        const res = await fetch(url, { headers });
        const body = await res.text();
        times.push(performance.now() - started);
        if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${body.slice(0, 200)}`);
        if (what.startsWith('GET /api') && JSON.parse(body).goals.length !== goals)
          throw new Error(`${what}: listed ${JSON.parse(body).goals.length} goals, not ${goals}`);
      }
      times.sort((a, b) => a - b);
      const median = times[Math.floor(times.length / 2)];
      console.log(
        `${what}, ${goals} goals: median ${median.toFixed(1)} ms, slowest ${times.at(-1).toFixed(1)} ms (${requests} requests; load ${os.loadavg()[0].toFixed(1)})`,
      );
    }
  } finally {
    server.close();
    await store.close();
    await stopEmbeddedStore(home).catch(() => {});
    fs.rmSync(home, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
