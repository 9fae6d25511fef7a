/**
 * Issue 21: goals in flight survive an upgrade. Workers of the previous release (PREVIOUS_RELEASE in
 * release-setup.ts, built by scripts/release-build.js) start nine goals and bring each to a chosen
 * point: mid-compaction, waiting for approval, paused, at a limit, with a background job, with
 * steering queued, just after a continue-as-new, paused by the runaway breaker, and mid-step in a git
 * workspace that the old build snapshots after every step. Then the old workers are SIGKILLed and workers of this build take over: every goal
 * goes on from where it was (the waiting ones when answered, with this build's CLI) and completes. No
 * workflow task may fail: the worker logs hold no TMPRL1100, the histories no WorkflowTaskFailed.
 *
 * `npm run test:upgrade -- --record` also saves the goals' histories as the old build left them into
 * test/fixtures/histories/<release>/ (once: an existing file is never overwritten), for replay.test.ts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { markersOfRelease } from '../../core/patch-procedure';
import { PATCHES } from '../../workflows/patches';
import { cliEnv, tempDir, waitFor } from '../support/cli';
import { saveHistoryFixture } from '../support/history-fixtures';
import { startTestTemporalServer, type TestTemporalServer } from '../support/temporal-server';
import {
  type Build,
  buildAt,
  determinismErrors,
  killWorker,
  type RunningWorker,
  runBuild,
  startWorker,
} from './builds';
import { bash, FINISH, type GoalRequest, goalTag, summaryOf, UpgradeModel } from './goal-model';
import { historiesOfGoal, patchMarkers, workflowTaskFailures } from './run-histories';

const MODEL = 'openai-compatible:test-model';
/** Continue-as-new every few steps, so a goal is soon just after one. */
const SUGGEST_CONTINUE_AS_NEW_EVENTS = 40;
const STEERING_TOKEN = 'STEER-7731';
/** Where worker logs go (CI artifacts). */
const OUTPUT = path.resolve(__dirname, '../../test-output/upgrade');
const RECORD = process.env.GOALRUN_UPGRADE_RECORD === '1';
/** How long a goal may take to reach its point, or to finish after the upgrade (busy 2-core machines). */
const POINT_TIMEOUT_MS = 180_000;
const FINISH_TIMEOUT_MS = 240_000;

/** One goal of the test. */
interface Goal {
  name: string;
  sessionId: string;
  workflowId: string;
  firstRunId: string;
  workspace: string;
}

/** A new git repository with one commit, as a user's project would be. */
function gitWorkspace(name: string): string {
  const dir = tempDir(`upgrade-${name}`);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: dir });
  git('init', '-q');
  fs.writeFileSync(path.join(dir, 'README.md'), 'a project\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  return dir;
}

/** A bash call that prints about 40 lines (~1,600 characters): under the spool size, so it is summarized. */
const filler = (n: number) => bash({ command: `seq 1 40 | sed 's/^/c${n} filler line number /'` });

describe('an upgrade with goals in flight', () => {
  let server: TestTemporalServer;
  let model: UpgradeModel;
  let client: Client;
  let connection: Connection;
  let oldBuild: Build;
  let newBuild: Build;
  let env: NodeJS.ProcessEnv;
  const workers: RunningWorker[] = [];
  const goals = new Map<string, Goal>();
  let phase: 'before' | 'after' = 'before';
  const timings: Record<string, number> = {};
  const started = Date.now();
  const mark = (what: string) => {
    timings[what] = Math.round((Date.now() - started) / 1000);
  };

  beforeAll(async () => {
    oldBuild = buildAt(inject('releaseVersion'), inject('releaseDir'));
    // GOALRUN_UPGRADE_NEW_BUILD names another checkout's build to upgrade to (e.g. one with a breaking change).
    newBuild = buildAt('current', process.env.GOALRUN_UPGRADE_NEW_BUILD ?? path.resolve(__dirname, '../..'));
    fs.rmSync(OUTPUT, { recursive: true, force: true });
    server = await startTestTemporalServer({
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': SUGGEST_CONTINUE_AS_NEW_EVENTS },
    });
    connection = await Connection.connect({ address: server.address });
    client = new Client({ connection });
    model = await UpgradeModel.start();
    env = cliEnv({
      GOALRUN_HOME: tempDir('upgrade-home'),
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_HTTP_ADDRESS: server.httpAddress,
      GOALRUN_TASK_QUEUE: `upgrade-${process.pid}`,
    });
  });

  afterAll(async () => {
    for (const worker of workers) await killWorker(worker, 'SIGTERM').catch(() => undefined);
    await model?.close();
    await connection?.close();
    await server?.stop();
    console.log(`upgrade test timings (s since start): ${JSON.stringify(timings)}`);
  });

  async function start(
    name: string,
    objective: string,
    extra: string[] = [],
    makeWorkspace: (name: string) => string = (n) => tempDir(`upgrade-${n}`),
  ): Promise<Goal> {
    const workspace = makeWorkspace(name);
    const result = await runBuild(
      oldBuild,
      [
        'start',
        `${objective} ${goalTag(name)}`,
        '--workspace',
        workspace,
        '--model',
        MODEL,
        '--base-url',
        model.server.url,
        '--json',
        ...extra,
      ],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    const { sessionId, workflowId, runId } = JSON.parse(result.stdout);
    const goal = { name, sessionId, workflowId, firstRunId: runId, workspace };
    goals.set(name, goal);
    return goal;
  }

  /** The goal's status as its search attribute says, and Temporal's status of its current run. */
  async function describeGoal(goal: Goal) {
    const description = await client.workflow.getHandle(goal.workflowId).describe();
    const status = (description.searchAttributes.GoalStatus as string[] | undefined)?.[0];
    return { status, run: description.status.name, runId: description.runId };
  }

  const reaches = (goal: Goal, status: string) =>
    waitFor(
      `${goal.name} to be ${status}`,
      async () => (await describeGoal(goal)).status === status,
      POINT_TIMEOUT_MS,
      500,
    );
  const holds = (name: string, what: (held: GoalRequest) => boolean) =>
    waitFor(
      `${name} to hold a model call`,
      () => (model.held.get(name) ?? []).some((call) => what(call.request)),
      POINT_TIMEOUT_MS,
      200,
    );

  /** The nondeterminism errors the workers logged so far: a wait ends at once when there is one. */
  const brokenLines = () => workers.flatMap((worker) => determinismErrors(worker.logFile));

  /** Runs a CLI command of this build until it exits 0 (the new worker may still be starting). */
  const answer = async (args: string[]) => {
    const outcome = await waitFor(
      `goalrun ${args.join(' ')}`,
      async () => {
        if (brokenLines().length > 0) return 'broken';
        const result = await runBuild(newBuild, args, env, 60_000);
        if (result.code !== 0) throw new Error(result.stderr.trim() || result.stdout.trim());
        return 'done';
      },
      120_000,
      2_000,
    );
    expect(brokenLines(), 'nondeterminism errors in the worker logs').toEqual([]);
    return outcome;
  };

  it('brings nine goals of the previous release to their points, and this build finishes them', async () => {
    let afterCompaction = 0;
    model.script('compaction', (request) => {
      if (request.summary) return phase === 'before' ? model.hold('compaction', request) : summaryOf(request);
      if (phase === 'after' && ++afterCompaction >= 3) return FINISH;
      return filler(request.call);
    });
    model.script('approval', (request) =>
      phase === 'before' && request.call === 1
        ? bash({
            command: 'echo approved > approved.txt',
            sandbox_permissions: 'require_escalated',
            justification: 'the upgrade test asks',
          })
        : FINISH,
    );
    model.script('paused', () => (phase === 'before' ? bash({ command: 'sleep 1' }) : FINISH));
    model.script('limit', (request) =>
      phase === 'before' ? bash({ command: `echo ${request.call}` }) : FINISH,
    );
    model.script('job', (request) => {
      if (phase === 'after') return FINISH;
      if (request.call === 1) return bash({ command: 'sleep 120', run_in_background: true });
      return model.hold('job', request);
    });
    model.script('steering', (request) => {
      if (phase === 'before') return model.hold('steering', request);
      return JSON.stringify(request.body.messages).includes(STEERING_TOKEN)
        ? FINISH
        : bash({ command: 'echo on' });
    });
    // The same call and result again and again: the old build's runaway breaker pauses the goal.
    model.script('breaker', () => (phase === 'before' ? bash({ command: 'echo same' }) : FINISH));
    // A git workspace: every step of the old build ends with a snapshot; the new build's go on from it.
    model.script('snapshot', (request) => {
      if (phase === 'after')
        return request.call > 6 ? FINISH : bash({ command: `echo ${request.call} >> steps.txt` });
      if (request.call <= 3) return bash({ command: `echo ${request.call} >> steps.txt` });
      return model.hold('snapshot', request);
    });
    model.script('can', async (request) => {
      if (phase === 'after') return FINISH;
      const can = goals.get('can');
      // The first model call of a run that began with a continue-as-new stays in flight.
      if (can && (await describeGoal(can)).runId !== can.firstRunId) return model.hold('can', request);
      return bash({ command: `echo ${request.call} >> count.txt` });
    });

    workers.push(startWorker(oldBuild, env, path.join(OUTPUT, `worker-${oldBuild.label}.log`)));
    await start('compaction', 'survive an upgrade mid-compaction', ['--context-window', '12000']);
    const approval = await start('approval', 'wait for an approval across the upgrade', [
      '--approval',
      'on-request',
    ]);
    const paused = await start('paused', 'stay paused across the upgrade');
    const limit = await start('limit', 'wait at a limit across the upgrade', ['--max-steps', '2']);
    await start('job', 'keep a background job across the upgrade');
    const steering = await start('steering', 'take steering queued before the upgrade');
    await start('can', 'count past a continue-as-new');
    const breaker = await start('breaker', 'repeat one call until the breaker pauses it');
    const snapshot = await start('snapshot', 'work in a git workspace across the upgrade', [], gitWorkspace);
    mark('started');

    await waitFor(
      'the paused goal to make a call',
      () => model.requestsOf('paused').length > 0,
      POINT_TIMEOUT_MS,
    );
    const pause = await runBuild(oldBuild, ['pause', paused.sessionId], env);
    expect(pause.code, pause.stderr).toBe(0);
    await holds('steering', () => true);
    // The old CLI's steer waits for the message to be stored; it is accepted (durably) at once.
    const steer = runBuild(
      oldBuild,
      ['steer', steering.sessionId, `${STEERING_TOKEN}: also say hello`],
      env,
      600_000,
    );
    await waitFor(
      'the steering update to be accepted',
      async () =>
        (await client.workflow.getHandle(steering.workflowId).fetchHistory()).events?.some(
          (event) => event.workflowExecutionUpdateAcceptedEventAttributes,
        ),
      POINT_TIMEOUT_MS,
      500,
    );
    await Promise.all([
      holds('compaction', (request) => request.summary),
      reaches(approval, 'waiting_approval'),
      reaches(paused, 'paused'),
      reaches(limit, 'limit_reached'),
      holds('job', (request) => request.call === 2),
      holds('can', () => true),
      reaches(breaker, 'paused'),
      holds('snapshot', () => true),
    ]);
    mark('points reached');

    // The upgrade: the old workers die without a word.
    await killWorker(workers[0]);
    mark('old workers killed');
    for (const goal of goals.values()) {
      const histories = await historiesOfGoal(client, goal.workflowId, goal.firstRunId);
      // Every run so far was started by the previous release's workers.
      const releaseMarkers = markersOfRelease(PATCHES, oldBuild.label);
      for (const history of histories) expect(patchMarkers(history), goal.name).toEqual(releaseMarkers);
      if (goal.name === 'can') expect(histories.length).toBeGreaterThan(1);
      if (RECORD)
        saveHistoryFixture(
          oldBuild.label,
          `upgrade-${goal.name}`,
          histories.map((h) => h.toJSON()),
        );
    }

    // upgrade-check names them all: started by the previous release, one release behind this build.
    const check = await runBuild(newBuild, ['upgrade-check', '--json'], env);
    expect(check.code, check.stderr).toBe(0);
    const report = JSON.parse(check.stdout);
    expect(report.openGoals).toBe(goals.size);
    expect(report.goals.map((goal: { sessionId: string }) => goal.sessionId).sort()).toEqual(
      [...goals.values()].map((goal) => goal.sessionId).sort(),
    );
    for (const listed of report.goals)
      expect(listed).toMatchObject({ release: oldBuild.label, releasesBehind: 1 });
    const table = await runBuild(newBuild, ['upgrade-check'], env);
    expect(table.stdout).toMatch(/BUILD\s+BEHIND/);
    expect(table.stdout).toContain(
      `${goals.size} of ${goals.size} open goals run on builds 1 or more releases older`,
    );

    phase = 'after';
    model.releaseAll();
    workers.push(startWorker(newBuild, env, path.join(OUTPUT, 'worker-current.log')));
    await answer(['approve', approval.sessionId]);
    await answer(['unpause', paused.sessionId]);
    await answer(['unpause', breaker.sessionId]);
    await answer(['limits', limit.sessionId, '--max-steps', '10']);
    mark('answered');

    for (const goal of goals.values()) {
      await waitFor(
        `${goal.name} to end`,
        // Closed, however: a goal that ended blocked or failed fails its run (GoalBlocked, GoalFailed),
        // and the status check below then names what it ended as instead of this wait timing out.
        async () => brokenLines().length > 0 || (await describeGoal(goal)).run !== 'RUNNING',
        FINISH_TIMEOUT_MS,
        1_000,
      );
      expect(brokenLines(), 'nondeterminism errors in the worker logs').toEqual([]);
      const shown = await runBuild(newBuild, ['status', goal.sessionId, '--json'], env);
      expect(shown.code, shown.stderr).toBe(0);
      expect(JSON.parse(shown.stdout).status, goal.name).toBe('completed');
    }
    mark('all completed');
    const drained = JSON.parse(
      (await runBuild(newBuild, ['upgrade-check', '--releases', '0', '--json'], env)).stdout,
    );
    expect(drained).toMatchObject({ openGoals: 0, goals: [] });
    await steer.catch(() => undefined);

    // What each goal was doing went on where it was.
    expect(fs.readFileSync(path.join(approval.workspace, 'approved.txt'), 'utf8')).toBe('approved\n');
    expect(model.requestsOf('compaction').filter((request) => request.summary).length).toBeGreaterThan(1);
    expect(
      model
        .requestsOf('steering')
        .some((request) => JSON.stringify(request.body.messages).includes(STEERING_TOKEN)),
    ).toBe(true);
    expect(model.requestsOf('limit').filter((request) => !request.summary).length).toBeGreaterThan(2);
    // The old build's three steps, then the new build's (the held call's retry numbers are not fixed).
    const steps = fs.readFileSync(path.join(snapshot.workspace, 'steps.txt'), 'utf8').trim().split('\n');
    expect(steps.slice(0, 3)).toEqual(['1', '2', '3']);
    expect(steps.length).toBeGreaterThan(3);
    // Snapshots of the old build's steps and of the new build's, one chain in the user's repository.
    const refs = execFileSync('git', ['for-each-ref', '--format=%(refname)', 'refs/goalrun/'], {
      cwd: snapshot.workspace,
      encoding: 'utf8',
    });
    expect(refs.trim().split('\n').length).toBeGreaterThanOrEqual(steps.length);

    // No workflow task failed: not in the logs, not in any run's history.
    for (const worker of workers) expect(determinismErrors(worker.logFile), worker.logFile).toEqual([]);
    for (const goal of goals.values()) {
      const histories = await historiesOfGoal(client, goal.workflowId, goal.firstRunId);
      expect(workflowTaskFailures(histories), goal.name).toEqual([]);
    }
    mark('checked');
  });
});
