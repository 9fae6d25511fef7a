/**
 * The Temporal Schedule of a configured retention (issue 17): a `goalrun worker` (roles all and
 * model: the ones that run workflows) creates or updates it when it starts, from the config's
 * `retention: { older_than, keep }`, and removes it when the config has none, so no session is ever
 * deleted without a configured retention. `goalrun clean --schedule` shows it: its spec, its rule,
 * its next runs and the result of its last one (`--yes`: sync it with the config first).
 */
import {
  type Client,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  type ScheduleOptions,
  ScheduleOverlapPolicy,
} from '@temporalio/client';
import {
  RETENTION_CATCHUP_WINDOW,
  RETENTION_SCHEDULE_HOUR_UTC,
  RETENTION_SCHEDULE_MINUTE,
  RETENTION_WORKFLOW_TYPE,
  type RetentionInput,
  type RetentionResult,
  retentionInputOf,
  retentionScheduleId,
} from '../core/retention-schedule';
import type { CliContext } from './context';
import { notice, printJson, say } from './output';

/** Next run times `clean --schedule` shows. */
const NEXT_RUNS_SHOWN = 3;

/** When the daily clean runs, as said to a person. */
export const RETENTION_TIME_TEXT = `daily at ${String(RETENTION_SCHEDULE_HOUR_UTC).padStart(2, '0')}:${String(RETENTION_SCHEDULE_MINUTE).padStart(2, '0')} UTC`;

/** The schedule's full options for a rule on a task queue. */
export function retentionScheduleOptions(taskQueue: string, input: RetentionInput): ScheduleOptions {
  const scheduleId = retentionScheduleId(taskQueue);
  return {
    scheduleId,
    spec: { calendars: [{ hour: RETENTION_SCHEDULE_HOUR_UTC, minute: RETENTION_SCHEDULE_MINUTE }] },
    action: {
      type: 'startWorkflow',
      workflowType: RETENTION_WORKFLOW_TYPE,
      // Temporal appends the run's time to this id, so each day's clean has its own.
      workflowId: scheduleId,
      taskQueue,
      args: [input],
    },
    // One clean at a time; a clean missed while the server was down runs once when it is back.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: RETENTION_CATCHUP_WINDOW },
  };
}

/** What a sync did, in one line for the worker's start notice; null when there was nothing to do. */
export async function syncRetentionSchedule(context: CliContext): Promise<string | null> {
  const client = await context.temporal();
  const taskQueue = await context.taskQueue();
  const scheduleId = retentionScheduleId(taskQueue);
  const retention = context.settings.config.retention;
  if (!retention) {
    try {
      await client.schedule.getHandle(scheduleId).delete();
      return `retention schedule ${scheduleId} deleted: the config has no retention, so nothing is cleaned by itself`;
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) return null;
      throw err;
    }
  }
  const input = retentionInputOf(retention);
  const options = retentionScheduleOptions(taskQueue, input);
  let verb = 'created';
  try {
    await client.schedule.create(options);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    verb = 'updated';
    await client.schedule.getHandle(scheduleId).update((previous) => ({
      ...previous,
      spec: options.spec,
      action: options.action,
      policies: { ...previous.policies, ...options.policies },
    }));
  }
  return `retention schedule ${scheduleId} ${verb}: ${RETENTION_TIME_TEXT}, ${ruleText(input)}`;
}

/** `goalrun clean --schedule`: the schedule as Temporal has it, and the config it comes from. */
export async function showRetentionSchedule(
  context: CliContext,
  json: boolean,
  sync = false,
): Promise<number> {
  if (sync) {
    const done = await syncRetentionSchedule(context);
    if (done) notice(done);
  }
  const client = await context.temporal();
  const taskQueue = await context.taskQueue();
  const scheduleId = retentionScheduleId(taskQueue);
  const configured = context.settings.config.retention
    ? retentionInputOf(context.settings.config.retention)
    : null;
  const view = await describeSchedule(client, scheduleId);
  if (json) {
    printJson({ scheduleId, configured, ...(view ?? { exists: false }) });
    return 0;
  }
  if (!view) {
    say(`no retention schedule (${scheduleId}): nothing is cleaned by itself`);
    say(
      configured
        ? `the config has retention (${ruleText(configured)}): start a worker, or run goalrun clean --schedule --yes, to create it`
        : 'set retention: { "older_than": "30d", "keep": 5 } in config.json and start a worker to clean daily',
    );
    return 0;
  }
  say(`retention schedule ${scheduleId}${view.paused ? ' (paused)' : ''}`);
  say(`  spec:      ${view.spec}`);
  say(`  rule:      ${view.rule ? ruleText(view.rule) : 'unknown'}, every project, named sessions kept`);
  say(`  task queue: ${view.taskQueue}`);
  say(`  next runs: ${view.nextRuns.join(', ') || 'none'}`);
  const last = view.lastRun;
  say(
    last
      ? `  last run:  ${last.at} ${last.workflowId}: ${last.status}${last.result ? ` (removed ${last.result.removed}, skipped ${last.result.skipped})` : ''}`
      : '  last run:  none yet',
  );
  if (configured && JSON.stringify(configured) !== JSON.stringify(view.rule))
    say(`  the config now says ${ruleText(configured)}: a worker updates the schedule when it starts`);
  if (!configured) say('  the config has no retention: the next worker to start deletes this schedule');
  return 0;
}

/** The schedule as `clean --schedule` shows it. */
interface ScheduleView {
  exists: true;
  paused: boolean;
  spec: string;
  rule: RetentionInput | null;
  taskQueue: string;
  nextRuns: string[];
  lastRun: { at: string; workflowId: string; status: string; result: RetentionResult | null } | null;
}

async function describeSchedule(client: Client, scheduleId: string): Promise<ScheduleView | null> {
  let description: Awaited<ReturnType<ReturnType<Client['schedule']['getHandle']>['describe']>>;
  try {
    description = await client.schedule.getHandle(scheduleId).describe();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  }
  const calendars = description.spec.calendars ?? [];
  const spec =
    calendars.length > 0
      ? calendars.map((each) => `daily at ${timeOf(each.hour)}:${timeOf(each.minute)} UTC`).join('; ')
      : 'custom (not set by goalrun)';
  const action = description.action;
  const recent = description.info.recentActions.at(-1);
  let lastRun: ScheduleView['lastRun'] = null;
  if (recent) {
    const { workflowId, firstExecutionRunId } = recent.action.workflow;
    const handle = client.workflow.getHandle(workflowId, firstExecutionRunId);
    const status = await handle
      .describe()
      .then((each) => each.status.name)
      .catch(() => 'UNKNOWN');
    const result =
      status === 'COMPLETED' ? ((await handle.result().catch(() => null)) as RetentionResult | null) : null;
    lastRun = { at: recent.takenAt.toISOString(), workflowId, status, result };
  }
  return {
    exists: true,
    paused: description.state.paused,
    spec,
    rule: (action.args?.[0] as RetentionInput | undefined) ?? null,
    taskQueue: action.taskQueue,
    nextRuns: description.info.nextActionTimes.slice(0, NEXT_RUNS_SHOWN).map((time) => time.toISOString()),
    lastRun,
  };
}

/** A calendar field (a number or a range list from Temporal) as two digits. */
function timeOf(field: unknown): string {
  const first = Array.isArray(field) ? (field[0] as { start?: number })?.start : field;
  return String(typeof first === 'number' ? first : 0).padStart(2, '0');
}

/** A rule, as said to a person. */
function ruleText(input: RetentionInput): string {
  return `${input.olderThan ? `sessions idle over ${input.olderThan}` : 'sessions of any age'}, keeping the newest ${input.keep} per project`;
}
