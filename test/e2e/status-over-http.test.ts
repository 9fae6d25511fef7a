/**
 * Issue 10: the read-only commands of a running goal (status, tasks, policy, stats, jobs, list)
 * answer through Temporal's HTTP API, against the real dev server, with what the gRPC client
 * gives: the live query while a worker runs the goal, the store's checkpoint once no worker answers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson, killAndWait, runCli, scriptedModel, spawnCli, tempDir, waitFor } from '../support/cli';
import { type GoalTestEnv, goalTestEnv } from '../support/goal-env';
import { statusOf } from '../support/goal-steps';

const RECORDER = path.resolve(__dirname, '../support/module-recorder.cjs');

/** A live snapshot without the clock, which ticks between two calls. */
function withoutClock(view: Record<string, unknown>): Record<string, unknown> {
  const { elapsedMs: _elapsed, ...rest } = view;
  return rest;
}

/**
 * A read command's JSON once the goal answered it live. Under load one query can outlast the CLI's
 * query timeout, and the CLI then shows the store's last checkpoint and says so (`shown`, or "did not
 * answer" on stderr): that is right, but not what the comparisons below are about.
 */
function liveJson(args: string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  return waitFor(`a live answer to goalrun ${args[0]}`, async () => {
    const result = await runCli(args, env);
    if (result.stderr.includes('did not answer')) return undefined;
    const json = expectJson(result) as Record<string, unknown>;
    return json.shown === undefined || json.shown === 'live' ? json : undefined;
  });
}

describe('a running goal read over the HTTP API', () => {
  let t: GoalTestEnv;
  let grpc: NodeJS.ProcessEnv;
  let sessionId: string;
  let worker: ReturnType<typeof spawnCli> | undefined;

  beforeAll(async () => {
    t = goalTestEnv('http-status');
    expect(t.env.TEMPORAL_HTTP_ADDRESS).toBeTruthy();
    grpc = { ...t.env };
    delete grpc.TEMPORAL_HTTP_ADDRESS;
    const model = scriptedModel(t.home, [
      {
        toolCalls: [
          {
            name: 'todo-write',
            args: { todos: [{ id: 'wait', content: 'wait a while', status: 'in_progress' }] },
          },
        ],
      },
      // Holds the goal in step 2 through every test, however slow the machine (afterAll cancels it);
      // not forever if the test dies.
      { toolCalls: [{ name: 'bash', args: { command: 'sleep 900' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'waited' } }] },
    ]);
    const polling = spawnCli(['worker'], t.env);
    worker = polling;
    await waitFor('the worker to poll', () => polling.output().includes(`polling task queue ${t.taskQueue}`));
    const started = expectJson(
      await runCli(['start', 'wait a while', '--workspace', t.workspace, '--model', model, '--json'], t.env),
    );
    sessionId = started.sessionId as string;
    // Step 2 asked for the long bash call: the goal now sits in it.
    await waitFor('the second step', async () => {
      const view = await statusOf(t, sessionId);
      return view.steps === 2 && view.status === 'running' && view.shown === 'live';
    });
  });

  afterAll(async () => {
    if (worker) await killAndWait(worker);
    if (sessionId) await runCli(['cancel', sessionId], grpc);
  });

  it('answers status, tasks, policy and stats live, as the gRPC client does', async () => {
    const status = await liveJson(['status', sessionId, '--json'], t.env);
    expect(status).toMatchObject({ sessionId, status: 'running', steps: 2, objective: 'wait a while' });
    expect(withoutClock(status)).toEqual(withoutClock(await liveJson(['status', sessionId, '--json'], grpc)));

    const tasks = await liveJson(['tasks', sessionId, '--json'], t.env);
    // Empty lists arrive as empty lists (the HTTP API's payload shorthand would make them null).
    expect(tasks).toEqual([
      expect.objectContaining({ id: 'wait', status: 'in_progress', blocked_by: [], dependencies: [] }),
    ]);
    expect(tasks).toEqual(await liveJson(['tasks', sessionId, '--json'], grpc));

    for (const command of ['policy', 'stats', 'jobs']) {
      expect(await liveJson([command, sessionId, '--json'], t.env)).toEqual(
        await liveJson([command, sessionId, '--json'], grpc),
      );
    }
  });

  it('lists the running goal (from its store row, as list always does)', async () => {
    const listed = (
      expectJson(await runCli(['list', '--json'], t.env)) as unknown as Array<Record<string, unknown>>
    ).find((view) => view.sessionId === sessionId);
    expect(listed).toMatchObject({ status: 'running', objective: 'wait a while' });
  });

  for (const command of ['status', 'jobs']) {
    it(`${command} loads no gRPC client to do so`, async () => {
      const record = path.join(tempDir('http-status-modules'), 'modules.txt');
      const env = { ...t.env, NODE_OPTIONS: `--require ${RECORDER}`, GOALRUN_MODULE_RECORD: record };
      expectJson(await runCli([command, sessionId, '--json'], env));
      const modules = fs.readFileSync(record, 'utf8').split('\n');
      expect(
        modules.filter((file) =>
          /node_modules[/\\](@temporalio[/\\](client|proto)|@grpc|zod)[/\\]/.test(file),
        ),
      ).toEqual([]);
    });
  }

  it('falls back to the checkpoint in the store once no worker answers the query', async () => {
    if (worker) await killAndWait(worker);
    worker = undefined;
    const overHttp = await statusOf(t, sessionId);
    expect(overHttp).toMatchObject({ sessionId, status: 'running', objective: 'wait a while' });
    // Both read the same saved snapshot, and say so; its clock keeps counting since the save.
    const overGrpc = expectJson(await runCli(['status', sessionId, '--json'], grpc));
    expect(overHttp.shown).toBe('last recorded state');
    expect(overGrpc.elapsedMs).toBeGreaterThanOrEqual(overHttp.elapsedMs);
    // Only what is read live may differ between the two reads: the clock, and whether the killed
    // worker's call has timed out on its heartbeat yet.
    const sameSave = (view: Record<string, unknown>) => ({
      ...view,
      elapsedMs: 0,
      liveness: null,
      retrying: null,
    });
    expect(sameSave(overHttp)).toEqual(sameSave(overGrpc));
    const policy = await runCli(['policy', sessionId], t.env);
    expect(policy.code, policy.stderr).toBe(0);
    expect(policy.stderr).toContain(`goal ${sessionId} did not answer (is a worker running it?)`);
  });
});
