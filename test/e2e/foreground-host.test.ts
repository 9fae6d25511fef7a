/**
 * Issue 16 item 2: a foreground `run` runs its own goal and nothing else. Two foreground runs and an
 * orphaned goal (its worker was killed) share one store and its task queue: each run's model calls and
 * tools are started by that run's process only, the orphan makes no step while they run, and a
 * `goalrun worker` started afterwards finishes the orphan. A foreground process that dies gives its goal
 * back to the store's workers by itself: a worker started after it finishes that goal too.
 */

import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIdOf } from '../../workflows/definitions';
import { killAndWait, runCli, spawnCli, tempDir, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { goalArgs, startGoal } from '../support/goal-steps';
import {
  type OpenAITestServer,
  promptText,
  requestStep,
  startOpenAITestServer,
  type TestResponse,
} from '../support/openai-test-server';

const STARTED = temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED;

describe('a foreground run', () => {
  let server: OpenAITestServer;
  let client: Client;
  /** Per objective: the answer to each step; a step listed in `hold` is held until released. */
  const scripts = new Map<string, { steps: number; hold?: Set<number> }>();
  const holds: Array<() => void> = [];
  beforeAll(async () => {
    server = await startOpenAITestServer({
      fallback: async (body): Promise<TestResponse> => {
        const text = promptText(body);
        const [objective, script] = [...scripts.entries()].find(([key]) => text.includes(key)) ?? [];
        if (!objective || !script) return { text: 'unknown goal' };
        const step = requestStep(body);
        if (script.hold?.delete(step)) await new Promise<void>((resolve) => holds.push(resolve));
        if (step > script.steps) {
          return {
            toolCalls: [{ name: 'finish', args: { status: 'complete', summary: `${objective} done` } }],
          };
        }
        return {
          delayMs: 200,
          toolCalls: [{ name: 'bash', args: { command: `echo ${objective} step ${step}` } }],
        };
      },
    });
    client = new Client({
      connection: await Connection.connect({ address: goalTestEnv('fg-probe').temporalAddress }),
    });
  });
  afterAll(async () => {
    for (const release of holds) release();
    await server?.close();
    await client?.connection.close();
  });

  const requestsFor = (objective: string) =>
    server.requests.filter((request) => promptText(request.body).includes(objective)).length;

  /** The identities of the workers that started the goal's activities (model calls and tools). */
  async function activityIdentities(sessionId: string): Promise<Set<string>> {
    const identities = new Set<string>();
    for await (const execution of client.workflow.list({
      query: `WorkflowId = '${workflowIdOf(sessionId)}'`,
    })) {
      const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      for (const event of history.events ?? []) {
        if (event.eventType === STARTED)
          identities.add(event.activityTaskStartedEventAttributes?.identity ?? '');
      }
    }
    return identities;
  }

  it('runs only its own goal, and an orphaned goal waits for the store’s workers', async () => {
    const t = goalTestEnv('fg-share');
    const tag = randomUUID().slice(0, 6);
    const orphan = `orphan-${tag}`;
    const first = `first-${tag}`;
    const second = `second-${tag}`;
    // The orphan's worker dies while its second model call is held.
    scripts.set(orphan, { steps: 3, hold: new Set([2]) });
    scripts.set(first, { steps: 4 });
    scripts.set(second, { steps: 4 });

    const { sessionId: orphanId } = await startGoal(
      { env: t.env, workspace: tempDir('fg-orphan') },
      server,
      orphan,
    );
    const worker = spawnCli(['worker'], t.env);
    await waitFor('the orphan’s held call', () => holds.length === 1, 120_000, 200);
    await killAndWait(worker, 'SIGKILL');
    const orphanRequests = requestsFor(orphan);

    const run = (objective: string) =>
      spawnCli(
        goalArgs('run', objective, { workspace: tempDir(`fg-${objective}`) }, server, ['--json']),
        t.env,
      );
    const runs = [run(first), run(second)];
    await Promise.all(runs.map((child) => new Promise((resolve) => child.once('exit', resolve))));
    // The result is stdout's JSON; what the run said on stderr (under load it said something after
    // the JSON, which broke a parse of both streams together) is only shown when the parse fails.
    const results = runs.map((child) => {
      try {
        return JSON.parse(child.stdoutText());
      } catch (err) {
        throw new Error(
          `${(err as Error).message}\nstdout:\n${child.stdoutText()}\nstderr:\n${child.stderrText()}`,
        );
      }
    });
    for (const result of results) expect(result.status).toBe('completed');
    // Nothing ran the orphan meanwhile (its held call's retry waits on the shared queue).
    expect(requestsFor(orphan)).toBe(orphanRequests);

    for (const [index, result] of results.entries()) {
      const identities = await activityIdentities(result.sessionId);
      expect([...identities]).toEqual([`${runs[index].pid}@${os.hostname()}`]);
    }

    const finisher = spawnCli(['worker'], t.env);
    try {
      const watched = await runCli(['watch', orphanId, '--json'], t.env, 240_000);
      expect(JSON.parse(watched.stdout).status, watched.stderr).toBe('completed');
      const identities = await activityIdentities(orphanId);
      for (const run of runs) expect(identities.has(`${run.pid}@${os.hostname()}`)).toBe(false);
    } finally {
      await killAndWait(finisher, 'SIGTERM');
    }
  }, 600_000);

  it('gives its goal back to the store’s workers when its process dies', async () => {
    const t = goalTestEnv('fg-died');
    const objective = `died-${randomUUID().slice(0, 6)}`;
    scripts.set(objective, { steps: 3, hold: new Set([2]) });
    const held = holds.length;
    const foreground = spawnCli(
      goalArgs('run', objective, { workspace: tempDir('fg-died') }, server, ['--json']),
      t.env,
    );
    await waitFor('the held call', () => holds.length === held + 1, 120_000, 200);
    const sessionId = JSON.parse((await runCli(['list', '--json'], t.env)).stdout).find(
      (goal: { objective: string }) => goal.objective === objective,
    ).sessionId as string;
    await killAndWait(foreground, 'SIGKILL');
    const worker = spawnCli(['worker'], t.env);
    try {
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 300_000);
      const final = JSON.parse(watched.stdout);
      expect(final.status, watched.stderr).toBe('completed');
      expect(final.recent.map((action: { text: string }) => action.text).join('\n')).toMatch(
        /the process that ran this goal in the foreground is gone/,
      );
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 480_000);
});
