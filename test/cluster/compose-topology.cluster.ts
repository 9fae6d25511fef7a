/**
 * Issue 20 §1: the docker-compose topology, run for real without Docker. A real Temporal server on
 * PostgreSQL (the version, schema setup and dynamic config compose uses), two model workers holding the
 * provider key, a tool host with its own HOME and no key (as an unprivileged user when the test runs as
 * root), and goalrun's store in a database of its own reached by a password-protected role that is no
 * superuser. 20 goals run through the CLI while one model worker is SIGKILLed, the tool host is
 * SIGTERMed and started again, and the Temporal server is SIGKILLed and started again. Every goal
 * completes, every call ran to its end exactly once (a marker per call), no store key is duplicated,
 * and status, list and watch answer over the server's HTTP API.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../store/open';
import type { SessionStore } from '../../store/types';
import { toolsQueueName } from '../../worker/roles';
import { CLI, cliEnv, killAndWait, runCli, spawnCli, tempDir, waitFor } from '../support/cli';
import { adminSql, type ClusterServer, localPostgres, startClusterServer } from '../support/cluster-server';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { clusterModel, goalPlans, objectiveOf } from './goal-plans';

const PROVIDER_KEY = `sk-cluster-${randomBytes(6).toString('hex')}`;
/** The unprivileged account the tool host runs as when the test runs as root. */
const TOOL_HOST_USER = 'nobody';
/** How long all 20 goals get to finish after the last fault. */
const FINISH_TIMEOUT_MS = 6 * 60_000;
/** What the result of a call run again after its tool host was stopped mid-call begins with. */
const INTERRUPTED_NOTE = 'an earlier attempt of this call was interrupted before its result was saved';
/** Goals started at once by `goalrun start` processes. */
const START_BATCH = 5;
const TERMINAL = ['completed', 'failed', 'blocked', 'cancelled', 'limit_reached'];

type Proc = ReturnType<typeof spawnCli>;

/** `goalrun worker` as the tool host's user (runuser when root), with only the environment given. */
function spawnAsToolHost(args: string[], env: NodeJS.ProcessEnv): Proc {
  if (process.getuid?.() !== 0) return spawnCli(args, env);
  const pairs = Object.entries(env).map(([name, value]) => `${name}=${value}`);
  // runuser forwards SIGTERM to the worker and waits for it; `env -i` keeps root's variables out.
  return spawnRaw('runuser', [
    '-u',
    TOOL_HOST_USER,
    '--',
    'env',
    '-i',
    ...pairs,
    process.execPath,
    CLI,
    ...args,
  ]);
}

function spawnRaw(command: string, args: string[]): Proc {
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
    stderr += chunk;
  });
  return Object.assign(child, { output: () => output, stdoutText: () => stdout, stderrText: () => stderr });
}

/** Makes a directory the tool host's user owns (it writes the workspaces and its own HOME). */
function toolHostDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  if (process.getuid?.() === 0) execFileSync('chown', ['-R', `${TOOL_HOST_USER}:`, dir]);
  return dir;
}

describe('the compose topology on a real Temporal server', () => {
  const pid = process.pid;
  const dir = tempDir('cluster');
  // mkdtemp makes it private to root: the tool host's user must be able to pass through it.
  fs.chmodSync(dir, 0o755);
  const storeRole = `goalrun_cluster_${pid}`;
  const storeDatabase = `goalrun_cluster_store_${pid}`;
  const storePassword = randomBytes(12).toString('hex');
  const plans = goalPlans();
  let server: ClusterServer;
  let model: OpenAITestServer;
  let storeUrl: string;
  let cli: NodeJS.ProcessEnv;
  let modelWorkers: Proc[] = [];
  let toolHost: Proc | undefined;
  let toolHostEnv: NodeJS.ProcessEnv;
  let toolsQueue: string;
  const root = toolHostDir(path.join(dir, 'workspaces'));
  const sessions = new Map<string, string>();
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    const began = Date.now();
    server = await startClusterServer({ dir, databasePrefix: `goalrun_cluster_temporal_${pid}` });
    timings.serverReadyMs = Date.now() - began;

    // goalrun's store: a database of its own, owned by a login role with a password and no privileges.
    const local = localPostgres();
    await adminSql(local.adminUrl, `DROP DATABASE IF EXISTS ${storeDatabase} WITH (FORCE)`);
    await adminSql(local.adminUrl, `DROP ROLE IF EXISTS ${storeRole}`);
    await adminSql(
      local.adminUrl,
      `CREATE ROLE ${storeRole} LOGIN PASSWORD '${storePassword}' NOSUPERUSER NOCREATEDB NOCREATEROLE`,
    );
    await adminSql(local.adminUrl, `CREATE DATABASE ${storeDatabase} OWNER ${storeRole}`);
    storeUrl = `postgres://${storeRole}:${storePassword}@${local.host}:${local.port}/${storeDatabase}`;

    model = await startOpenAITestServer({ fallback: clusterModel(plans) });
    const base = {
      DATABASE_URL: storeUrl,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_HTTP_ADDRESS: server.httpAddress,
      TEMPORAL_NAMESPACE: 'default',
    };
    cli = cliEnv({ ...base, GOALRUN_HOME: tempDir('cluster-cli-home') });
    modelWorkers = [1, 2].map((n) =>
      spawnCli(
        ['worker', '--role', 'model'],
        cliEnv({ ...base, GOALRUN_HOME: tempDir(`cluster-model-${n}`), OPENAI_API_KEY: PROVIDER_KEY }),
      ),
    );
    const home = toolHostDir(path.join(dir, 'tool-host-home'));
    toolHostEnv = {
      ...base,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      GOALRUN_HOME: path.join(home, '.goalrun'),
    };
    // The queue the tool host will poll (it prints the same): goals are started before it runs.
    toolsQueue = toolsQueueName(root);
    for (const worker of modelWorkers) {
      await waitFor('a model worker to poll', () =>
        worker.output().includes('model worker polling task queue'),
      );
    }
  });

  afterAll(async () => {
    // runuser does not pass SIGKILL on: the tool host's own process is killed first.
    if (toolHost?.pid && toolHost.exitCode === null) {
      const inner = spawnSync('pgrep', ['-P', String(toolHost.pid)], { encoding: 'utf8' }).stdout.trim();
      for (const pid of inner.split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    for (const child of [...modelWorkers, toolHost]) if (child) await killAndWait(child, 'SIGKILL');
    await server?.kill('SIGKILL');
    await model?.close();
    console.log(`cluster test timings: ${JSON.stringify(timings)}`);
  });

  /** A goal's status over the HTTP API; undefined while the server does not answer. */
  async function statusOf(sessionId: string): Promise<Record<string, unknown> | undefined> {
    const shown = await runCli(['status', sessionId, '--json'], cli);
    return shown.code === 0 ? JSON.parse(shown.stdout) : undefined;
  }

  /** How many markers the goals have left so far. */
  function markerCount(): number {
    return plans.reduce((sum, plan) => {
      const marks = path.join(root, plan.tag, 'marks');
      return sum + (fs.existsSync(marks) ? fs.readdirSync(marks).length : 0);
    }, 0);
  }

  it('runs 20 goals to the end through a killed model worker, a restarted tool host and a crashed server', async () => {
    const began = Date.now();
    // Started five at a time: a CLI process each, as users would, without 20 at once on two cores.
    const startGoal = async (plan: (typeof plans)[number]) => {
      const workspace = toolHostDir(path.join(root, plan.tag));
      const started = await runCli(
        ['start', objectiveOf(plan), '--workspace', workspace, '--model', 'openai:gpt-4o'].concat([
          '--base-url',
          model.url,
          '--tools-queue',
          toolsQueue,
          '--max-steps',
          '40',
          '--json',
        ]),
        cli,
      );
      expect(started.code, started.stderr).toBe(0);
      sessions.set(plan.tag, JSON.parse(started.stdout).sessionId);
    };
    for (let i = 0; i < plans.length; i += START_BATCH) {
      await Promise.all(plans.slice(i, i + START_BATCH).map(startGoal));
    }
    timings.startedAllMs = Date.now() - began;
    // Nothing ran yet: each goal's first activity waits for the tool host, which starts now, so all
    // 20 are in flight together when the faults come.
    expect(markerCount()).toBe(0);
    toolHost = spawnAsToolHost(['worker', '--role', 'tools', '--workspace-root', root], toolHostEnv);
    await waitFor('the tool host to poll', () => toolHost?.output().includes(`polling ${toolsQueue}`));

    // The compaction goals are told to compact once five calls are in (a manual compaction keeps the
    // last three exchanges and summarizes what is before them).
    const compacted = new Set<string>();
    const asking = new Set<string>();
    const compactWhenReady = async () => {
      for (const plan of plans.filter((p) => p.kind === 'compaction')) {
        if (compacted.has(plan.tag) || asking.has(plan.tag)) continue;
        if (!fs.existsSync(path.join(root, plan.tag, 'marks', plan.calls[4]))) continue;
        // Sent without waiting: a compaction waits for the step in flight, and the others go on.
        asking.add(plan.tag);
        void runCli(['compact', sessions.get(plan.tag) as string, '--json'], cli)
          .then((result) => {
            if (result.code === 0 && JSON.parse(result.stdout).stage !== 'none') compacted.add(plan.tag);
          })
          .catch(() => undefined)
          .finally(() => asking.delete(plan.tag));
      }
    };

    // The faults come at fixed shares of all the calls, so every one of them hits goals in flight.
    const total = plans.reduce((sum, plan) => sum + plan.calls.length, 0);
    const reach = (share: number, what: string) =>
      waitFor(
        what,
        async () => {
          await compactWhenReady();
          return markerCount() >= Math.floor(total * share);
        },
        180_000,
        250,
      );

    // Fault 1: one model worker dies mid-flight.
    await reach(0.15, 'the goals to be under way');
    await killAndWait(modelWorkers[0], 'SIGKILL');
    timings.modelWorkerKilledAtMs = Date.now() - began;
    timings.callsAtModelWorkerKill = markerCount();

    // Fault 2: the tool host is stopped (SIGTERM) and started again.
    await reach(0.35, 'more calls to run after the model worker died');
    await killAndWait(toolHost as Proc, 'SIGTERM');
    toolHost = spawnAsToolHost(['worker', '--role', 'tools', '--workspace-root', root], toolHostEnv);
    timings.toolHostRestartedAtMs = Date.now() - began;
    timings.callsAtToolHostRestart = markerCount();

    // Fault 3: the Temporal server is killed, and started again.
    await reach(0.55, 'more calls to run after the tool host came back');
    timings.callsAtServerKill = markerCount();
    await server.kill('SIGKILL');
    const downAt = Date.now();
    await server.start();
    timings.serverDownMs = Date.now() - downAt;
    // Every fault hit goals in flight: calls were still to come after the last one.
    expect(timings.callsAtServerKill).toBeLessThan(total);

    const finals = new Map<string, Record<string, unknown>>();
    await waitFor(
      'all 20 goals to end',
      async () => {
        await compactWhenReady();
        for (const [tag, sessionId] of sessions) {
          if (finals.has(tag)) continue;
          const view = await statusOf(sessionId);
          if (view && TERMINAL.includes(String(view.status))) finals.set(tag, view);
        }
        return finals.size === sessions.size;
      },
      FINISH_TIMEOUT_MS,
      2_000,
    );
    timings.allEndedMs = Date.now() - began;
    const notCompleted = [...finals].filter(([, view]) => view.status !== 'completed');
    expect(notCompleted, JSON.stringify(notCompleted)).toEqual([]);
    await waitFor('the compact requests to be answered', () => asking.size === 0, 120_000);
    expect([...compacted].sort()).toEqual(plans.filter((p) => p.kind === 'compaction').map((p) => p.tag));

    // The summarizer was asked once per compaction goal at least.
    for (const plan of plans.filter((p) => p.kind === 'compaction')) {
      const summaries = model.requests.filter(
        (r) =>
          (!r.body.tools || r.body.tools.length === 0) &&
          JSON.stringify(r.body).includes(`cluster goal ${plan.tag}`),
      );
      expect(summaries.length, plan.tag).toBeGreaterThan(0);
    }
    // Every model call carried the model workers' key.
    for (const request of model.requests)
      expect(request.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);

    // No store key twice; every call ran to its end exactly once (one line in its marker), except a
    // call the SIGTERM of the tool host cut short: goalrun kills what a stopping tool host runs and
    // runs it again elsewhere, and its result tells the model so. Such a call may have finished its
    // work just before the kill (its marker then has a line from each run); it is counted, not hidden.
    const store: SessionStore = await openStore({ databaseUrl: storeUrl, home: tempDir('cluster-store') });
    const rerun: string[] = [];
    try {
      for (const plan of plans) {
        const messages = await store.listMessages(sessions.get(plan.tag) as string);
        expect(new Set(messages.map((m) => m.key)).size, plan.tag).toBe(messages.length);
        for (const call of plan.calls) {
          const marker = path.join(root, plan.tag, 'marks', call);
          expect(fs.existsSync(marker), `${call} left no marker`).toBe(true);
          const lines = fs.readFileSync(marker, 'utf8');
          if (lines === `DONE:${call}\n`) continue;
          const result = messages
            .map((m) => JSON.stringify(m.message))
            .find((text) => text.includes(`working on ${call}`) && text.includes('"role":"tool"'));
          expect(result, `${call} ran ${lines.split('\n').length - 1} times`).toContain(INTERRUPTED_NOTE);
          rerun.push(call);
        }
      }
    } finally {
      await store.close();
    }
    timings.callsRerunAfterToolHostSigterm = rerun.length;
    // Only calls in flight at that moment can be among them: at most one per goal.
    expect(rerun.length).toBeLessThanOrEqual(plans.length);
  });

  it('answers status, list and watch over the HTTP API of the restarted server', async () => {
    const sessionId = sessions.get('G01') as string;
    const status = await runCli(['status', sessionId, '--json'], cli);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ sessionId, status: 'completed' });
    const list = await runCli(['list', '--json'], cli);
    expect(list.code, list.stderr).toBe(0);
    for (const id of sessions.values()) expect(list.stdout).toContain(id);
    const watched = await runCli(['watch', sessionId, '--json'], cli);
    expect(watched.code, watched.stderr).toBe(0);
    expect(JSON.parse(watched.stdout)).toMatchObject({ status: 'completed' });
    // With the gRPC address dead, status and list can only have answered over the HTTP API.
    const httpOnly = { ...cli, TEMPORAL_ADDRESS: '127.0.0.1:1' };
    for (const args of [
      ['status', sessionId, '--json'],
      ['list', '--json'],
    ]) {
      const result = await runCli(args, httpOnly);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
    }
  });
  it('gave each process what compose gives it, and nothing more', async () => {
    const role = await adminSql(
      localPostgres().adminUrl,
      'SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = $1',
      [storeRole],
    );
    expect(role.rows).toEqual([{ rolsuper: false, rolcreatedb: false, rolcreaterole: false }]);
    const environ = (child: Proc) => fs.readFileSync(`/proc/${child.pid}/environ`, 'utf8');
    for (const worker of modelWorkers.filter((w) => w.exitCode === null && w.signalCode === null))
      expect(environ(worker)).toContain(`OPENAI_API_KEY=${PROVIDER_KEY}`);
    // The tool host's own process (runuser's child), its user, its HOME, and no key.
    const workerPid = Number(
      execFileSync('pgrep', ['-P', String(toolHost?.pid)], { encoding: 'utf8' }).trim() || toolHost?.pid,
    );
    const hostEnviron = fs.readFileSync(
      `/proc/${process.getuid?.() === 0 ? workerPid : toolHost?.pid}/environ`,
      'utf8',
    );
    expect(hostEnviron).not.toContain(PROVIDER_KEY);
    expect(hostEnviron).toContain(`HOME=${toolHostEnv.HOME}\0`);
    if (process.getuid?.() === 0) {
      const uid = fs.statSync(`/proc/${workerPid}`).uid;
      expect(uid).toBe(Number(execFileSync('id', ['-u', TOOL_HOST_USER], { encoding: 'utf8' }).trim()));
    }
  });
});
