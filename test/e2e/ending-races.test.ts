/**
 * Issue 15 §1, the races at the end of a step and of a goal. Both fail on the handlers of before the
 * command queue:
 * - a /limits that re-arms the time limit while the step it cut short waits for its cancelled tool
 *   ended the goal as "cancelled by request"; the goal must go on under the raised limit;
 * - while a finishing goal waits to kill the jobs of a tool host that is gone, steering was accepted
 *   and then failed with the server's words when the run completed; it must be refused at once, and a
 *   cancellation in that window must not be swallowed as an unreachable job host.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { steerUpdate } from '../../workflows/definitions';
import { killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { startGoal } from '../support/goal-steps';
import {
  type OpenAITestServer,
  promptText,
  requestStep,
  startOpenAITestServer,
} from '../support/openai-test-server';

const { EventType } = temporal.api.enums.v1;

describe('races at the end of a step and of a goal', () => {
  let server: OpenAITestServer;
  let client: Client;
  beforeAll(async () => {
    server = await startOpenAITestServer();
    client = new Client({
      connection: await Connection.connect({ address: goalTestEnv('races-probe').temporalAddress }),
    });
  });
  afterAll(async () => {
    await server?.close();
    await client?.connection.close();
  });

  it('goes on under a limit raised while the step the time limit cut short winds down', async () => {
    const t = goalTestEnv('race-limit');
    const objective = `race-limit-${randomUUID().slice(0, 8)}`;
    server.setFallback((body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      // SIGTERM is ignored by the command and its children: the tool kills the group only after its grace.
      return requestStep(body) === 1
        ? { toolCalls: [{ name: 'bash', args: { command: "trap '' TERM; sleep 600", timeout_ms: 900_000 } }] }
        : { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'went on' } }] };
    });
    const worker = spawnCli(['worker'], t.env);
    try {
      const { sessionId, workflowId } = await startGoal(t, server, objective, ['--max-minutes', '1']);
      const handle = client.workflow.getHandle(workflowId);
      let timerId: string | null = null;
      // The moment the time limit fires, the limit is raised: the step is then still waiting for its
      // cancelled command to die.
      await waitFor(
        'the time limit to fire',
        async () => {
          const events = (await handle.fetchHistory()).events ?? [];
          timerId ??=
            events.find(
              (event) =>
                event.eventType === EventType.EVENT_TYPE_TIMER_STARTED &&
                Buffer.from(event.userMetadata?.summary?.data ?? [])
                  .toString()
                  .includes('goal time limit'),
            )?.timerStartedEventAttributes?.timerId ?? null;
          return events.some(
            (event) =>
              event.eventType === EventType.EVENT_TYPE_TIMER_FIRED &&
              event.timerFiredEventAttributes?.timerId === timerId,
          );
        },
        150_000,
        100,
      );
      const id = randomUUID();
      await handle.executeUpdate(steerUpdate, {
        args: [{ id, text: '/limits max_minutes=30', from: 'tester@races' }],
        updateId: id,
      });
      const watched = await runCli(['watch', sessionId, '--json'], t.env, 240_000);
      const final = JSON.parse(watched.stdout);
      expect(final.status, watched.stderr).toBe('completed');
      expect(final.limits.maxMinutes).toBe(30);
      expect(final.steps).toBe(2);
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 420_000);

  it('refuses steering while a finishing goal waits for a lost job host, and lets a cancel through', async () => {
    const t = goalTestEnv('race-end');
    const objective = `race-end-${randomUUID().slice(0, 8)}`;
    // The first worker's step-2 call is never answered: that worker dies with it, and its job.
    let held = 0;
    server.setFallback(async (body) => {
      if (!promptText(body).includes(objective)) return { text: 'not mine' };
      if (requestStep(body) === 1) {
        return { toolCalls: [{ name: 'bash', args: { command: 'sleep 600', run_in_background: true } }] };
      }
      if (held++ === 0) await new Promise(() => {});
      return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'job left behind' } }] };
    });
    const first = spawnCli(['worker'], t.env);
    let second: ReturnType<typeof spawnCli> | null = null;
    try {
      const { sessionId, workflowId } = await startGoal(t, server, objective);
      await waitFor(
        'the background job',
        async () =>
          JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout).runningJobs === 1,
        120_000,
        500,
      );
      // The job's host dies; the next worker finishes the goal and must wait for that host in vain.
      await killAndWait(first, 'SIGKILL');
      second = spawnCli(['worker'], t.env);
      await waitFor('the new worker’s step', () => held >= 2, 120_000, 200);
      // The goal has finished and now waits to kill the lost host's job: the goal is ending from the
      // workflow task that scheduled the kill, however long the machine took to get there.
      const handle = client.workflow.getHandle(workflowId);
      await waitFor(
        'the goal to try to kill the lost job',
        async () =>
          ((await handle.fetchHistory()).events ?? []).some(
            (event) =>
              event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
              event.activityTaskScheduledEventAttributes?.activityType?.name === 'killSessionJobs',
          ),
        120_000,
        200,
      );

      const steered = await runCli(['steer', sessionId, 'one more thing', '--json'], t.env, 120_000);
      expect(steered.code, steered.stdout).toBe(2);
      expect(steered.stderr).toMatch(/the goal is ending \(completed\)/);

      expect((await runCli(['cancel', sessionId, '--wait'], t.env, 240_000)).code).toBe(0);
      const final = JSON.parse((await runCli(['status', sessionId, '--json'], t.env)).stdout);
      expect(final.status).toBe('cancelled');
      const recent = (final.recent as Array<{ text: string }>).map((action) => action.text).join('\n');
      expect(recent).not.toMatch(/goal completed/);
    } finally {
      await killAndWait(first, 'SIGKILL');
      if (second) await killAndWait(second, 'SIGTERM');
    }
  }, 480_000);
});
