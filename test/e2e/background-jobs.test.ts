/**
 * Issue 8, acceptance 6: background jobs (spec S-JOBS). A small HTTP server started with `bash
 * run_in_background` keeps running across later steps that talk to it; its output is read with an
 * offset (`job-output`, then `bash job_id/offset` from the next_offset the first read gave);
 * `goalrun jobs` lists it; cancelling the goal kills it (the port is closed, no process is left).
 * SIGTERM on the worker kills the job at once and the running command once its 30 s grace is over
 * (issue 16: a command that ends within the grace is recorded instead, test/e2e/worker-shutdown.test.ts); the killed call fails with the
 * retryable ToolHostShuttingDown failure, another worker runs it again (its result warns that the
 * command may already have run), and the job, whose host is gone, is then `lost`. A stopping worker
 * polls no more, so a new call never reaches it here; its refusal ("goalrun worker is shutting
 * down; command not started") is proven where a call can be handed to it: test/tools/jobs.test.ts
 * and test/tools/tool-activity.test.ts.
 *
 * The goals run with --network so that the test can reach the job's server from outside the sandbox.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KILLED_BY_SHUTDOWN_MESSAGE } from '../../activities/tools/jobs';
import type { SessionStore } from '../../store/types';
import { workflowIdOf } from '../../workflows/definitions';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
// The jobs' ports come from below the ephemeral range (free-port.ts says why).
import { findFreePort } from '../support/free-port';
import { type GoalTestEnv, goalTestEnv, testStore } from '../support/goal-env';
import { goalArgs, startGoal } from '../support/goal-steps';
import {
  type ChatRequestBody,
  type OpenAITestServer,
  requestStep,
  startOpenAITestServer,
  type TestTurn,
} from '../support/openai-test-server';
import { toolResultsOf } from '../support/tool-results';

/** The job: an HTTP server that logs every request line to stdout. */
const SERVER_JS = `
const port = Number(process.argv[2]);
require('http').createServer((req, res) => {
  console.log('GET ' + req.url);
  res.end('served ' + req.url + '\\n');
}).listen(port, '127.0.0.1', () => console.log('listening on ' + port));
`;

/** GET from the host; the body, or the error code (ECONNREFUSED once the job is gone). */
function fetchFromHost(port: number, urlPath: string): Promise<string> {
  return new Promise((resolve) => {
    http
      .get({ host: '127.0.0.1', port, path: urlPath, timeout: 5_000 }, (res) => {
        let body = '';
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve(body));
      })
      .on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/**
 * What a request to the port finds once the job is gone: ECONNREFUSED. A socket still being torn
 * down can answer a connect with a reset for a moment, so that is tried again; a served answer is not.
 */
async function portClosed(port: number, urlPath: string): Promise<string> {
  let answer = await fetchFromHost(port, urlPath);
  for (let tries = 0; answer === 'ECONNRESET' && tries < 20; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    answer = await fetchFromHost(port, urlPath);
  }
  return answer;
}

/** Live processes whose command line contains every one of `parts`. */
function processesWith(...parts: string[]): number[] {
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      return parts.every((part) => cmdline.includes(part)) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

/** A bash command that fetches a path from the job (retrying while it starts) and prints the answer. */
function fetchInSandbox(port: number, urlPath: string): string {
  return `for i in $(seq 50); do curl -sf http://127.0.0.1:${port}${urlPath} && exit 0; sleep 0.2; done; exit 1`;
}

const bash = (args: Record<string, unknown>): TestTurn => ({ toolCalls: [{ name: 'bash', args }] });
const finish: TestTurn = {
  toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done with the job' } }],
};

describe('background jobs', () => {
  let model: OpenAITestServer;
  let store: SessionStore;
  let connection: Connection;
  let databaseUrl: string;
  const workers: Array<ReturnType<typeof spawnCli>> = [];

  beforeAll(async () => {
    model = await startOpenAITestServer();
    databaseUrl = goalTestEnv('jobs-store').databaseUrl;
    store = await testStore(databaseUrl);
  });

  afterAll(async () => {
    for (const worker of workers) await killAndWait(worker, 'SIGKILL');
    await connection?.close();
    await store?.close();
    await model?.close();
  });

  function worker(t: GoalTestEnv) {
    const child = spawnCli(['worker'], t.env);
    workers.push(child);
    return child;
  }

  async function start(t: GoalTestEnv): Promise<string> {
    fs.writeFileSync(path.join(t.workspace, 'server.js'), SERVER_JS);
    return (await startGoal(t, model, 'run a server and use it', ['--network'])).sessionId;
  }

  async function status(t: GoalTestEnv, sessionId: string) {
    return JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
  }

  it('keeps a job across steps, reads it by offset, lists it, and kills it on cancel', async () => {
    const t = goalTestEnv('jobs');
    const port = await findFreePort();
    const marker = `600.${process.pid}1`;
    let secondOffset = -1;
    const turns: Array<(body: ChatRequestBody) => TestTurn> = [
      () => bash({ command: `node server.js ${port}`, run_in_background: true }),
      () => bash({ command: fetchInSandbox(port, '/first') }),
      () => ({ toolCalls: [{ name: 'job-output', args: { job_id: 'job-1', offset: 0 } }] }),
      () => bash({ command: fetchInSandbox(port, '/second') }),
      (body) => {
        // What a model does: continue from the next_offset of its last read.
        const read = /next_offset=(\d+)/.exec(
          JSON.stringify(body.messages).match(/job=job-1[^"]*next_offset=\d+/)?.[0] ?? '',
        );
        secondOffset = Number(read?.[1] ?? -1);
        return bash({ job_id: 'job-1', offset: secondOffset });
      },
      () => bash({ command: `sleep ${marker}` }),
    ];
    model.setFallback((body) => turns[requestStep(body) - 1]?.(body) ?? finish);
    worker(t);
    const sessionId = await start(t);

    await waitFor('the last step to be running', () => processesWith('sleep', marker).length > 0, 90_000);
    const results = await toolResultsOf(store, sessionId);
    expect(results.map((r) => [r.toolName, r.ok])).toEqual([
      ['bash', true],
      ['bash', true],
      ['job-output', true],
      ['bash', true],
      ['bash', true],
    ]);
    expect(results[0].text).toContain('started background job job-1');
    expect(results[1].text).toContain('served /first');
    expect(results[3].text).toContain('served /second');
    // The first read from 0 holds the start and the first request; the second, from its
    // next_offset, only what came after.
    expect(results[2].text).toMatch(/^job=job-1 status=running offset=0 next_offset=\d+/);
    expect(results[2].text).toContain(`listening on ${port}`);
    expect(results[2].text).toContain('GET /first');
    expect(secondOffset).toBeGreaterThan(0);
    expect(results[4].text).toContain(`job=job-1 status=running offset=${secondOffset}`);
    expect(results[4].text).toContain('GET /second');
    expect(results[4].text).not.toContain('GET /first');
    expect(results[4].text).not.toContain('listening on');

    // Still serving, four steps after it started, and `goalrun jobs` lists it.
    expect(await fetchFromHost(port, '/from-host')).toBe('served /from-host\n');
    const listed = await runCli(['jobs', sessionId], t.env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(
      new RegExp(`job-1 \\[running\\] node server\\.js ${port} \\(started \\S+ ago\\)`),
    );
    const json = JSON.parse((await runCli(['jobs', sessionId, '--json'], t.env)).stdout);
    expect(json).toEqual([expect.objectContaining({ jobId: 'job-1', status: 'running' })]);
    expect(processesWith('server.js', String(port))).not.toEqual([]);

    const cancelled = await runCli(['cancel', sessionId, '--wait'], t.env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    await waitFor(
      'the goal to be cancelled',
      async () => (await status(t, sessionId)).status === 'cancelled',
    );
    expect(await portClosed(port, '/after-cancel')).toBe('ECONNREFUSED');
    expect(processesWith('server.js', String(port))).toEqual([]);
    expect(processesWith('sleep', marker)).toEqual([]);
    const checkpoint = await store.latestCheckpoint(sessionId);
    expect(checkpoint?.goalState).toMatchObject({
      status: 'cancelled',
      jobs: [expect.objectContaining({ jobId: 'job-1', status: 'killed' })],
    });
  });

  it('kills the jobs of a goal that completes, and of one that stops at a limit', async () => {
    const t = goalTestEnv('jobs-end');
    worker(t);
    for (const [ending, extra] of [
      ['completed', []],
      ['limit_reached', ['--max-steps', '2']],
    ] as const) {
      const port = await findFreePort();
      const turns: Array<() => TestTurn> = [
        () => bash({ command: `node server.js ${port}`, run_in_background: true }),
        () => bash({ command: fetchInSandbox(port, '/alive') }),
      ];
      model.setFallback((body) => turns[requestStep(body) - 1]?.() ?? finish);
      fs.writeFileSync(path.join(t.workspace, 'server.js'), SERVER_JS);
      const started = await runCli(
        goalArgs('start', `a job, then ${ending}`, t, model, ['--network', '--json', ...extra]),
        t.env,
      );
      expect(started.code, started.stderr).toBe(0);
      const { sessionId } = JSON.parse(started.stdout);
      await waitFor(`the goal to be ${ending}`, async () => (await status(t, sessionId)).status === ending);
      const results = await toolResultsOf(store, sessionId);
      expect(results[1].text).toContain('served /alive');
      await waitFor('the job to be gone', () => processesWith('server.js', String(port)).length === 0);
      expect(await portClosed(port, '/after-end')).toBe('ECONNREFUSED');
      // The live state says how it ended a moment before the final checkpoint is written.
      const checkpoint = await waitFor(`the ${ending} checkpoint`, async () => {
        const latest = await store.latestCheckpoint(sessionId);
        return (latest?.goalState as { status?: string } | undefined)?.status === ending ? latest : undefined;
      });
      expect(checkpoint?.goalState).toMatchObject({
        status: ending,
        jobs: [expect.objectContaining({ jobId: 'job-1', status: 'killed' })],
      });
    }
  });

  it('SIGTERM on the worker kills the command and the job; the call is retried elsewhere', async () => {
    const t = goalTestEnv('jobs-sigterm');
    const port = await findFreePort();
    const marker = `600.${process.pid}2`;
    const turns: Array<(body: ChatRequestBody) => TestTurn> = [
      () => bash({ command: `node server.js ${port}`, run_in_background: true }),
      // Long the first time; on the retry, it says so and ends.
      () =>
        bash({ command: `if [ -e started ]; then echo run again; else touch started; sleep ${marker}; fi` }),
      () => ({ toolCalls: [{ name: 'job-output', args: { job_id: 'job-1' } }] }),
    ];
    model.setFallback((body) => turns[requestStep(body) - 1]?.(body) ?? finish);
    const first = worker(t);
    const sessionId = await start(t);
    await waitFor('the long command to run', () => processesWith('sleep', marker).length > 0, 90_000);
    expect(
      await waitFor(
        'the job to serve',
        async () => (await fetchFromHost(port, '/x')).startsWith('served') || undefined,
      ),
    ).toBe(true);

    const exited = new Promise<number | null>((resolve) => first.once('exit', (code) => resolve(code)));
    first.kill('SIGTERM');
    // The job at once; the command at the end of the worker's 30 s grace.
    await waitFor('the job to be killed', () => processesWith('server.js', String(port)).length === 0);
    await waitFor('the command to be killed', () => processesWith('sleep', marker).length === 0, 120_000);
    expect(await portClosed(port, '/after-sigterm')).toBe('ECONNREFUSED');
    expect(await exited).toBe(0);

    // The interrupted call waits for its retry, failed with the spec's words.
    connection = await Connection.connect({ address: t.temporalAddress });
    const handle = new Client({ connection }).workflow.getHandle(workflowIdOf(sessionId));
    const pending = await waitFor('the retry to be scheduled', async () => {
      const { raw } = await handle.describe();
      return (raw.pendingActivities ?? []).find((activity) => activity.lastFailure?.message);
    });
    expect(pending.activityType?.name).toBe('runTool');
    expect(pending.lastFailure?.message).toBe(KILLED_BY_SHUTDOWN_MESSAGE);
    expect(pending.lastFailure?.applicationFailureInfo?.type).toBe('ToolHostShuttingDown');

    // With no worker to answer a query, `goalrun jobs` shows the registry as the goal last saved it.
    const offline = await runCli(['jobs', sessionId], t.env);
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toContain('no worker answered');
    expect(offline.stdout).toContain(`job-1 [running] node server.js ${port}`);

    // Another worker runs the call again, and the job, whose host is gone, is lost.
    // The retry waits for a worker to start, then job-output waits JOB_HOST_WAIT (60 s) for the
    // dead host: the wait is generous because CI runs this beside other suites on two cores.
    const second = worker(t);
    await waitFor(
      'the goal to end',
      async () => ((await status(t, sessionId)).status === 'completed' ? true : undefined),
      240_000,
      1_000,
    ).catch(async (err: Error) => {
      const pendingNow = (await handle.describe()).raw.pendingActivities ?? [];
      const pendingLines = pendingNow.map(
        (activity) =>
          `${activity.activityType?.name} attempt ${activity.attempt} state ${activity.state}: ${activity.lastFailure?.message ?? ''}`,
      );
      throw new Error(
        `${err.message}\nstatus: ${JSON.stringify(await status(t, sessionId))}\npending: ${pendingLines.join('; ')}\nsecond worker's output (tail):\n${second.output().slice(-4000)}`,
      );
    });
    const results = await toolResultsOf(store, sessionId);
    expect(results[1].text).toMatch(/^\[attempt 2: an earlier attempt of this call was interrupted/);
    expect(results[1].text).toContain('run again');
    expect(results[2]).toMatchObject({ toolName: 'job-output', ok: false });
    expect(results[2].text).toContain('job-1 could not be reached (its tool host is gone)');
    const checkpoint = await store.latestCheckpoint(sessionId);
    expect(checkpoint?.goalState).toMatchObject({
      jobs: [expect.objectContaining({ jobId: 'job-1', status: 'lost' })],
    });
  }, 420_000);
});
