/**
 * Issue 20 §2: a new worker build deployed next to the old one, on the real Temporal server, with
 * Worker Deployments. Build A (the built bundle) runs goals; build B (test/cluster/build-b: a change
 * no patch guards, which would fail the replay of A's histories) registers beside it and is made
 * current. A's goals finish on A or move to B at a continue-as-new, new goals start on B, and no
 * workflow task fails anywhere (a nondeterminism would show as one).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIdOf } from '../../worker/deployment';
import { workflowIdOf } from '../../workflows/definitions';
import { cliEnv, killAndWait, runCli, scriptedModel, spawnCli, tempDir, waitFor } from '../support/cli';
import { adminSql, type ClusterServer, localPostgres, startClusterServer } from '../support/cluster-server';
import { BUILD_B_TIMER_MS } from './build-b/mark';

/** Another port range than the compose test's server. */
const PORT_BASE = 17_400;
/** A continue-as-new every few steps, so goals cross runs while both builds are up. */
const SUGGEST_CAN_AFTER_EVENTS = 60;
const BUILT_BUNDLE = path.resolve(__dirname, '../../dist/workflow-bundle.js');

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Build B's mark: its timer of BUILD_B_TIMER_MS (build A's timers are all longer). */
function isBuildBTimer(event: HistoryEvent): boolean {
  const timeout = event.timerStartedEventAttributes?.startToFireTimeout;
  return (
    Boolean(timeout) &&
    Number(timeout?.seconds ?? 0) === 0 &&
    (timeout?.nanos ?? 0) === BUILD_B_TIMER_MS * 1e6
  );
}

/** The long goal's step whose command waits for the gate file: before its first continue-as-new. */
const GATED_STEP = 3;
/** The file in the long goal's workspace that lets its gated step go on, written once B is current. */
const GATE_FILE = 'gate';

/**
 * A goal of many short steps, each a bash call. With `gated`, step GATED_STEP's command waits for
 * GATE_FILE in the workspace: the goal is held on A, short of a continue-as-new, until the test lets
 * it go, however long build B takes to start (under load it took longer than the whole goal).
 */
function longGoal(dir: string, steps: number, delayMs: number, gated = false): string {
  const turns = Array.from({ length: steps }, (_, i) => {
    const step = `echo step ${i + 1} >> steps.txt`;
    const command =
      gated && i + 1 === GATED_STEP ? `while [ ! -e ${GATE_FILE} ]; do sleep 0.2; done; ${step}` : step;
    return {
      delayMs,
      toolCalls: [{ name: 'bash', args: { command, timeout_ms: 600_000 } }],
    };
  });
  turns.push({
    delayMs,
    toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'all steps ran' } as never }],
  });
  return scriptedModel(dir, turns);
}

describe('a new worker build deployed beside the old one', () => {
  const pid = process.pid;
  const dir = tempDir('versioning');
  const database = `goalrun_versioning_store_${pid}`;
  let server: ClusterServer;
  let env: NodeJS.ProcessEnv;
  let client: Client;
  let connection: Connection;
  let bundleB: string;
  const workers: Array<ReturnType<typeof spawnCli>> = [];

  beforeAll(async () => {
    server = await startClusterServer({
      dir,
      databasePrefix: `goalrun_versioning_temporal_${pid}`,
      portBase: PORT_BASE,
      extraDynamicConfig: `limit.historyCount.suggestContinueAsNew:\n  - value: ${SUGGEST_CAN_AFTER_EVENTS}\n    constraints: {}\n`,
    });
    const local = localPostgres();
    await adminSql(local.adminUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await adminSql(local.adminUrl, `CREATE DATABASE ${database}`);
    const url = new URL(local.adminUrl);
    url.pathname = `/${database}`;
    env = cliEnv({
      DATABASE_URL: url.toString(),
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_HTTP_ADDRESS: server.httpAddress,
      GOALRUN_HOME: tempDir('versioning-home'),
    });
    const { code } = await bundleWorkflowCode({
      workflowsPath: path.resolve(__dirname, 'build-b/workflows.ts'),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error },
    });
    bundleB = path.join(dir, 'workflow-bundle-b.js');
    fs.writeFileSync(bundleB, code);
    connection = await Connection.connect({ address: server.address });
    client = new Client({ connection });
  });

  afterAll(async () => {
    for (const worker of workers) await killAndWait(worker, 'SIGKILL');
    await connection?.close();
    await server?.kill('SIGKILL');
  });

  /** Every event of every run of a goal, oldest run first. */
  async function historyOf(sessionId: string, runId?: string): Promise<HistoryEvent[]> {
    const history = await client.workflow.getHandle(workflowIdOf(sessionId), runId).fetchHistory();
    return history.events ?? [];
  }

  /** The run ids of a goal's chain (visibility's order). */
  async function runsOf(sessionId: string): Promise<string[]> {
    const runs: string[] = [];
    for await (const execution of client.workflow.list({
      query: `WorkflowId = '${workflowIdOf(sessionId)}'`,
    })) {
      runs.push(execution.runId);
    }
    return runs;
  }

  async function statusOf(sessionId: string): Promise<Record<string, unknown>> {
    const shown = await runCli(['status', sessionId, '--json'], env);
    expect(shown.code, shown.stderr).toBe(0);
    return JSON.parse(shown.stdout);
  }

  async function startGoal(
    objective: string,
    model: string,
    workspace = tempDir('versioning-ws'),
  ): Promise<string> {
    const started = await runCli(
      ['start', objective, '--workspace', workspace, '--model', model, '--json'],
      env,
    );
    expect(started.code, started.stderr).toBe(0);
    return JSON.parse(started.stdout).sessionId;
  }

  it('pins goals to their build, moves them at continue-as-new, starts new goals on the current build', async () => {
    const buildA = buildIdOf(BUILT_BUNDLE);
    const buildB = buildIdOf(bundleB);
    expect(buildB).not.toBe(buildA);

    const workerA = spawnCli(['worker', '--versioning', '--set-current'], env);
    workers.push(workerA);
    await waitFor(
      'build A to be current',
      () => workerA.output().includes(`build ${buildA} is now current`),
      90_000,
    );

    // Goals on A: one long enough to cross continue-as-new while B is up, two short ones.
    const longWorkspace = tempDir('versioning-long-ws');
    const long = await startGoal('long goal on A', longGoal(dir, 14, 400, true), longWorkspace);
    const shorts = [
      await startGoal('short goal on A', longGoal(dir, 3, 1_500)),
      await startGoal('short goal on A', longGoal(dir, 3, 1_500)),
    ];
    for (const id of [long, ...shorts]) {
      await waitFor(`${id} to run on A`, async () => {
        const view = await statusOf(id);
        return view.build === buildA && Number(view.steps) >= 1;
      });
    }

    // Build B registers beside A and is made current.
    const workerB = spawnCli(['worker', '--versioning', '--set-current'], {
      ...env,
      GOALRUN_WORKFLOW_BUNDLE: bundleB,
    });
    workers.push(workerB);
    await waitFor(
      'build B to be current',
      () => workerB.output().includes(`build ${buildB} is now current`),
      90_000,
    );
    const shown = await runCli(['deploy', 'show', '--json'], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ deployment: 'goalrun', current: buildB });
    expect(JSON.parse(shown.stdout).builds).toEqual(expect.arrayContaining([buildA, buildB]));
    // B is current: the long goal, held on A short of its first continue-as-new, goes on.
    expect(await statusOf(long)).toMatchObject({ build: buildA, status: 'running' });
    fs.writeFileSync(path.join(longWorkspace, GATE_FILE), '');

    const fresh = await startGoal('new goal on B', longGoal(dir, 2, 200));
    for (const id of [long, ...shorts, fresh]) {
      await waitFor(
        `${id} to complete`,
        async () => (await statusOf(id)).status === 'completed',
        180_000,
        1_000,
      );
    }

    // The new goal ran B's code from its start: B's timer is its first command.
    const freshEvents = await historyOf(fresh);
    expect(freshEvents.some(isBuildBTimer)).toBe(true);
    expect((await statusOf(fresh)).build).toBe(buildB);

    // A's goals: every run began on A, or began on B after a continue-as-new; no run ever failed a task.
    const moved: string[] = [];
    for (const id of [long, ...shorts, fresh]) {
      for (const runId of await runsOf(id)) {
        const events = await historyOf(id, runId);
        const failed = events.filter((event) => event.workflowTaskFailedEventAttributes);
        expect(failed, `${id} run ${runId}`).toEqual([]);
        const ranB = events.some(isBuildBTimer);
        const continued = Boolean(
          events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId,
        );
        if (id !== fresh && ranB) {
          expect(continued, `${id}: only a continued run may be on B`).toBe(true);
          moved.push(id);
        }
      }
    }
    // The long goal crossed a continue-as-new after B became current: it moved there.
    expect(moved).toContain(long);
    expect(workerA.output()).not.toMatch(/nondetermin/i);
    expect(workerB.output()).not.toMatch(/nondetermin/i);
  });
});
