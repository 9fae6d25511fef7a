/**
 * `goalrun schedule list|show|pause|unpause|trigger|delete` (issue 28 §3), over the Temporal
 * Schedules of this store's task queue. `trigger` fires under the schedule's own overlap policy (the
 * SDK's default would allow every overlap) and says what the firing did; `delete` also cancels the
 * goal a firing runs, so nothing of the schedule is left running.
 */
import type { Client, ScheduleDescription } from '@temporalio/client';
import { type ScheduledGoalMemo, scheduleIdPrefix, scheduleNameOf } from '../../core/goal-schedule';
import type { CliContext } from '../context';
import { notice, printJson, say } from '../output';
import { firingText, printSchedule, printScheduleList } from '../schedule-print';
import { describeNamed, type FiringView, scheduleView } from '../schedule-view';

/** How long `trigger` watches for what its firing did before it says only that it fired. */
const TRIGGER_REPORT_MS = 20_000;
/** How long `delete` waits for a cancelled goal to save its checkpoint and stop. */
const DELETE_WAIT_MS = 60_000;
/** Between two looks at the schedule or a workflow. */
const POLL_MS = 250;

/** `schedule list`: every schedule of this store, one line each. */
export async function scheduleListCommand(context: CliContext, options: { json?: boolean }): Promise<number> {
  const client = await context.temporal();
  const taskQueue = await context.taskQueue();
  const views = [];
  for await (const summary of client.schedule.list()) {
    const name = scheduleNameOf(taskQueue, summary.scheduleId);
    if (name === null) continue;
    const description = await client.schedule
      .getHandle(summary.scheduleId)
      .describe()
      .catch(() => null);
    if (description) views.push(await scheduleView(client, name, description, 'last'));
  }
  views.sort((a, b) => a.name.localeCompare(b.name));
  if (options.json) printJson({ taskQueue, prefix: scheduleIdPrefix(taskQueue), schedules: views });
  else printScheduleList(views);
  return 0;
}

/** `schedule show NAME`. */
export async function scheduleShowCommand(
  context: CliContext,
  name: string,
  options: { json?: boolean },
): Promise<number> {
  const client = await context.temporal();
  const view = await scheduleView(client, name, await describeNamed(client, await context.taskQueue(), name));
  if (options.json) printJson(view);
  else printSchedule(view);
  return 0;
}

/** `schedule pause NAME` and `schedule unpause NAME`. */
export async function schedulePauseCommand(
  context: CliContext,
  name: string,
  pause: boolean,
): Promise<number> {
  const client = await context.temporal();
  const description = await describeNamed(client, await context.taskQueue(), name);
  const handle = client.schedule.getHandle(description.scheduleId);
  if (pause) {
    await handle.pause(`paused by goalrun schedule pause ${name}`);
    say(
      `paused schedule ${name}: nothing fires until goalrun schedule unpause ${name} (a running goal goes on)`,
    );
  } else {
    await handle.unpause(`unpaused by goalrun schedule unpause ${name}`);
    const next = (await handle.describe()).info.nextActionTimes[0];
    say(`unpaused schedule ${name}${next ? `: next run ${next.toISOString()}` : ''}`);
  }
  return 0;
}

/** What a trigger did, as `trigger --json` prints it. */
type TriggerOutcome =
  | { outcome: 'started'; goal: string | null; sessionId: string | null; workflowId: string }
  | { outcome: 'skipped' | 'buffered'; running: FiringView[] }
  | { outcome: 'unknown' };

/** `schedule trigger NAME`: fires once now, under the schedule's overlap policy, and says what happened. */
export async function scheduleTriggerCommand(
  context: CliContext,
  name: string,
  options: { json?: boolean },
): Promise<number> {
  const client = await context.temporal();
  const before = await describeNamed(client, await context.taskQueue(), name);
  const handle = client.schedule.getHandle(before.scheduleId);
  await handle.trigger(before.policies.overlap);
  const outcome = await triggerOutcome(client, before, name);
  if (options.json) printJson({ schedule: name, ...outcome });
  else if (outcome.outcome === 'started')
    say(
      `fired schedule ${name}: started goal ${outcome.goal ?? outcome.workflowId}${outcome.sessionId ? ` (session ${outcome.sessionId})` : ''}`,
    );
  else if (outcome.outcome === 'skipped')
    say(
      `fired schedule ${name}: skipped, its goal still runs (${outcome.running.map(firingText).join(', ')}; overlap skip)`,
    );
  else if (outcome.outcome === 'buffered')
    say(
      `fired schedule ${name}: kept for later, it starts when ${outcome.running.map(firingText).join(', ')} ends (overlap buffer-one)`,
    );
  else say(`fired schedule ${name}; goalrun schedule show ${name} shows what it started`);
  return 0;
}

/** Watches the schedule until the firing shows: a new action (and its goal's name), a skip, or a buffered one. */
async function triggerOutcome(
  client: Client,
  before: ScheduleDescription,
  name: string,
): Promise<TriggerOutcome> {
  const handle = client.schedule.getHandle(before.scheduleId);
  const deadline = Date.now() + TRIGGER_REPORT_MS;
  while (Date.now() < deadline) {
    const now = await handle.describe();
    if (now.info.numActionsTaken > before.info.numActionsTaken) {
      const action = now.info.recentActions.at(-1)?.action.workflow;
      if (action) return { outcome: 'started', ...(await firingGoal(client, action.workflowId, deadline)) };
    }
    const view = async () => (await scheduleView(client, name, now)).running;
    if (now.info.numActionsSkippedOverlap > before.info.numActionsSkippedOverlap)
      return { outcome: 'skipped', running: await view() };
    if (Number(now.raw.info?.bufferSize ?? 0) > Number(before.raw.info?.bufferSize ?? 0))
      return { outcome: 'buffered', running: await view() };
    await delay(POLL_MS);
  }
  return { outcome: 'unknown' };
}

/** The goal a firing made (its memo), once it has; null fields if the deadline comes first. */
async function firingGoal(
  client: Client,
  workflowId: string,
  deadline: number,
): Promise<{ goal: string | null; sessionId: string | null; workflowId: string }> {
  while (Date.now() < deadline) {
    const firing = await client.workflow
      .getHandle(workflowId)
      .describe()
      .catch(() => null);
    const memo = (firing?.memo ?? {}) as Partial<ScheduledGoalMemo>;
    if (memo.goal && memo.sessionId) return { goal: memo.goal, sessionId: memo.sessionId, workflowId };
    await delay(POLL_MS);
  }
  return { goal: null, sessionId: null, workflowId };
}

/** `schedule delete NAME`: no more firings, and the goal a firing runs is cancelled (it checkpoints first). */
export async function scheduleDeleteCommand(context: CliContext, name: string): Promise<number> {
  const client = await context.temporal();
  const description = await describeNamed(client, await context.taskQueue(), name);
  const running = (await scheduleView(client, name, description, 'last')).running;
  // The schedule first: no firing may start while its running goals are cancelled.
  await client.schedule.getHandle(description.scheduleId).delete();
  say(`deleted schedule ${name}`);
  for (const firing of running) {
    const handle = client.workflow.getHandle(firing.workflowId);
    await handle.cancel();
    const what = firing.goal ? `goal ${firing.goal}` : `firing ${firing.workflowId}`;
    if (await closedWithin(client, firing.workflowId, DELETE_WAIT_MS))
      say(
        `cancelled its running ${what}${firing.goal ? `; its checkpoint is kept (goalrun resume ${firing.goal} continues it)` : ''}`,
      );
    else notice(`asked its running ${what} to cancel; it stops once a worker runs it (goalrun worker)`);
  }
  return 0;
}

/** Whether the workflow has closed within `ms`. */
async function closedWithin(client: Client, workflowId: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  const handle = client.workflow.getHandle(workflowId);
  for (;;) {
    const status = await handle
      .describe()
      .then((each) => each.status.name)
      .catch(() => 'UNKNOWN');
    if (status !== 'RUNNING') return true;
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
