/**
 * Issue 28 §3 through the built CLI: `schedule add --every 1m` makes a Temporal Schedule whose firing
 * starts a goal NAME-<time of the firing> on the store's workers, on time and by hand (`trigger`);
 * with overlap skip, a second trigger while the first goal is held at the model is skipped (read from
 * Temporal's schedule info through `schedule show --json`); `delete` cancels the running goal, so no
 * workflow of the schedule is left running; bad input exits 2.
 */

import type { ChildProcess } from 'node:child_process';
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firingStamp, scheduleIdOf } from '../../core/goal-schedule';
import { workflowIdOf } from '../../core/workflow-names';
import { expectJson, killAndWait, runCli, spawnCli, waitFor } from '../support/cli';
import { type GoalTestEnv, goalTestEnv } from '../support/goal-env';
import { type HoldingFinishServer, startHoldingFinishServer, TEST_MODEL } from '../support/goal-steps';
import { promptText } from '../support/openai-test-server';

/** Generous: the machine is shared by many test processes. */
const SLOW_MS = 120_000;
/** An `--every 1m` schedule fires within a minute; the goal then needs a worker to pick it up. */
const FIRST_FIRING_MS = 150_000;
/** The objective of the goals the test server holds at their first model call while held. */
const HELD = 'held objective of the schedule test';

describe('goal schedules', () => {
  let finisher: HoldingFinishServer;
  let t: GoalTestEnv;
  let worker: ChildProcess & { output: () => string };
  let temporal: Client;
  const cli = (args: string[]) => runCli(args, t.env, SLOW_MS, { cwd: t.workspace });
  const goalArgs = () => [
    '--workspace',
    t.workspace,
    '--model',
    TEST_MODEL,
    '--base-url',
    finisher.server.url,
  ];

  beforeAll(async () => {
    finisher = await startHoldingFinishServer((body) => promptText(body).includes(HELD));
    t = goalTestEnv('schedules');
    worker = spawnCli(['worker'], t.env);
    temporal = new Client({ connection: await Connection.connect({ address: t.temporalAddress }) });
  });
  afterAll(async () => {
    finisher?.release();
    if (worker) await killAndWait(worker, 'SIGTERM');
    await finisher?.server.close();
    await temporal?.connection.close();
  });

  it('fires an --every 1m schedule on time and by hand, each firing a goal NAME-<time> that completes', async () => {
    const added = expectJson(
      await cli(['schedule', 'add', 'tick', '--every', '1m', 'tick objective', ...goalArgs(), '--json']),
    );
    expect(added).toMatchObject({ name: 'tick', spec: 'every 1m', overlap: 'skip', paused: false });
    expect(added.catchupWindowMs).toBe(3_600_000);
    const next = new Date(added.nextRuns[0] as string);
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
    expect(next.getUTCSeconds()).toBe(0);

    // A second schedule of that name is refused, and the first is left as it was.
    const again = await cli(['schedule', 'add', 'tick', '--every', '1h', 'other', ...goalArgs()]);
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toContain('a schedule named "tick" exists already');

    // On time: the first firing is the minute `add` announced, and its goal carries that time.
    const onTime = await waitFor(
      'the first firing of tick to complete its goal',
      async () => {
        const shown = expectJson(await cli(['schedule', 'show', 'tick', '--json']));
        const first = shown.recent[0];
        return first?.status === 'completed' ? first : undefined;
      },
      FIRST_FIRING_MS,
      1_000,
    );
    expect(onTime.scheduledAt).toBe(next.toISOString());
    expect(onTime.goal).toBe(`tick-${firingStamp(next)}`);
    const status = expectJson(await cli(['status', onTime.goal, '--json']));
    expect(status).toMatchObject({ status: 'completed', sessionId: onTime.sessionId });

    // By hand: paused, so no firing on the minute can race the trigger.
    expect((await cli(['schedule', 'pause', 'tick'])).code).toBe(0);
    const fired = expectJson(await cli(['schedule', 'trigger', 'tick', '--json']));
    expect(fired).toMatchObject({ schedule: 'tick', outcome: 'started' });
    expect(fired.goal).toMatch(/^tick-\d{8}T\d{6}Z$/);
    expect(fired.goal).not.toBe(onTime.goal);
    await waitFor('the triggered goal to complete', async () => {
      const shown = expectJson(await cli(['status', fired.goal, '--json']));
      return shown.status === 'completed';
    });

    const listed = await cli(['schedule', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/NAME\s+SPEC\s+NEXT RUN\s+LAST GOAL\s+PAUSED/);
    expect(listed.stdout).toMatch(new RegExp(`tick\\s+every 1m\\s+-\\s+${fired.goal} completed\\s+paused`));

    const deleted = await cli(['schedule', 'delete', 'tick']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain('deleted schedule tick');
    expect(deleted.stdout).not.toContain('cancelled');
  });

  it('skips a second firing while the first goal runs, and delete cancels that goal', async () => {
    finisher.hold();
    // Paused: only the test's triggers fire it.
    const added = await cli(['schedule', 'add', 'held', '--every', '1m', HELD, '--paused', ...goalArgs()]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('added schedule held');

    const first = expectJson(await cli(['schedule', 'trigger', 'held', '--json']));
    expect(first.outcome).toBe('started');
    await waitFor('the first goal to call the model (held there)', () =>
      finisher.server.requests.some((request) => promptText(request.body).includes(HELD)),
    );

    const second = expectJson(await cli(['schedule', 'trigger', 'held', '--json']));
    expect(second.outcome).toBe('skipped');
    expect(second.running.map((firing: { goal: string }) => firing.goal)).toEqual([first.goal]);

    const shown = expectJson(await cli(['schedule', 'show', 'held', '--json']));
    expect(shown.counts).toEqual({ taken: 1, skippedOverlap: 1, missedCatchupWindow: 0 });
    expect(shown.recent).toHaveLength(1);
    expect(shown.running).toHaveLength(1);
    expect(shown.running[0]).toMatchObject({
      goal: first.goal,
      sessionId: first.sessionId,
      status: 'running',
    });

    const deleted = await cli(['schedule', 'delete', 'held']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain('deleted schedule held');
    expect(deleted.stdout).toContain(`cancelled its running goal ${first.goal}`);

    // Nothing of the schedule is left: not the schedule, not the firing, not the goal.
    await expect(temporal.schedule.getHandle(scheduleIdOf(t.taskQueue, 'held')).describe()).rejects.toThrow(
      ScheduleNotFoundError,
    );
    const goal = await temporal.workflow.getHandle(workflowIdOf(first.sessionId)).describe();
    expect(goal.status.name).toBe('CANCELLED');
    const firing = await temporal.workflow.getHandle(first.workflowId).describe();
    expect(firing.status.name).toBe('CANCELLED');
    const status = expectJson(await cli(['status', first.goal, '--json']));
    expect(status.status).toBe('cancelled');
    const running = [];
    for await (const each of temporal.workflow.list({
      query: `TaskQueue = '${t.taskQueue}' AND ExecutionStatus = 'Running'`,
    }))
      running.push(each.workflowId);
    expect(running).toEqual([]);
  });

  it('with --overlap buffer-one, keeps a second firing and starts it when the first goal ends', async () => {
    finisher.hold();
    const objective = `${HELD}, buffered`;
    const added = await cli([
      'schedule',
      'add',
      'buffered',
      '--every',
      '1m',
      objective,
      '--overlap',
      'buffer-one',
      '--paused',
      ...goalArgs(),
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('overlap buffer-one');
    const first = expectJson(await cli(['schedule', 'trigger', 'buffered', '--json']));
    expect(first.outcome).toBe('started');
    await waitFor('the first buffered goal to call the model (held there)', () =>
      finisher.server.requests.some((request) => promptText(request.body).includes(objective)),
    );
    const second = expectJson(await cli(['schedule', 'trigger', 'buffered', '--json']));
    expect(second.outcome).toBe('buffered');
    expect(second.running.map((firing: { goal: string }) => firing.goal)).toEqual([first.goal]);

    finisher.release();
    const done = await waitFor(
      'both goals to complete, one after the other',
      async () => {
        const shown = expectJson(await cli(['schedule', 'show', 'buffered', '--json']));
        const recent = shown.recent as Array<{ goal: string; status: string }>;
        return recent.length === 2 && recent.every((firing) => firing.status === 'completed')
          ? shown
          : undefined;
      },
      SLOW_MS,
      1_000,
    );
    expect(done.counts).toEqual({ taken: 2, skippedOverlap: 0, missedCatchupWindow: 0 });
    expect(done.recent[0].goal).toBe(first.goal);
    expect(done.recent[1].goal).toMatch(/^buffered-\d{8}T\d{6}Z/);
    expect(done.recent[1].goal).not.toBe(first.goal);
    expect((await cli(['schedule', 'delete', 'buffered'])).code).toBe(0);
  });

  it('refuses bad input with exit 2 and a clear message', async () => {
    const cases: Array<[string[], string]> = [
      [['--cron', '61 * * * *'], 'the minute field "61" must hold values from 0 to 59'],
      [['--cron', '0 3 * *'], '--cron needs 5 fields'],
      [['--every', '5x'], '--every must be a duration such as 1m'],
      [['--every', '30s'], '--every must be a duration such as 1m'],
      [['--every', '1m', '--cron', '0 3 * * *'], 'one of the two'],
      [[], 'one of the two'],
      [['--every', '1h', '--catchup-window', 'soon'], '--catchup-window must be a duration'],
      [['--every', '1h', '--max-steps', '0'], '--max-steps must be a positive whole number'],
      [['--every', '1h', '--time-zone', 'Europe/Berlin'], '--time-zone applies to --cron only'],
      [['--cron', '0 3 * * *', '--time-zone', 'Mars/Olympus'], '--time-zone must be an IANA time zone'],
    ];
    for (const [flags, message] of cases) {
      const result = await cli(['schedule', 'add', 'bad', 'objective', ...flags, ...goalArgs()]);
      expect(result.code, `${flags.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(message);
    }
    const badName = await cli(['schedule', 'add', 'no/slash', 'objective', '--every', '1h', ...goalArgs()]);
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('may hold only letters, digits');
    const unknown = await cli(['schedule', 'trigger', 'nonesuch']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no schedule named "nonesuch"');
    // A good cron in a zone: 03:00 in Berlin is 02:00 UTC in December (CET, UTC+1).
    const cron = expectJson(
      await cli([
        'schedule',
        'add',
        'berlin',
        'objective',
        '--cron',
        '0 3 * * *',
        '--time-zone',
        'Europe/Berlin',
        '--paused',
        ...goalArgs(),
        '--json',
      ]),
    );
    expect(cron.spec).toBe('cron "0 3 * * *" (Europe/Berlin)');
    expect(cron.paused).toBe(true);
    const shown = await cli(['schedule', 'show', 'berlin']);
    expect(shown.stdout).toContain('next runs:  none while paused');
    const description = await temporal.schedule.getHandle(scheduleIdOf(t.taskQueue, 'berlin')).describe();
    expect(description.spec.timezone).toBe('Europe/Berlin');
    expect((await cli(['schedule', 'delete', 'berlin'])).code).toBe(0);
    // Nothing was created by the refused adds.
    await expect(temporal.schedule.getHandle(scheduleIdOf(t.taskQueue, 'bad')).describe()).rejects.toThrow(
      ScheduleNotFoundError,
    );
  });
});
