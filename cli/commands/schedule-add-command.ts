/**
 * `goalrun schedule add NAME (--every D | --cron SPEC) OBJECTIVE [start options]` (issue 28 §3): the
 * goal's options are checked here by the parser `start` uses, then kept, with the goal's project, in
 * the action of a Temporal Schedule whose firings start scheduledGoalWorkflow on this store's queue.
 */
import {
  ScheduleAlreadyRunning,
  type ScheduleOptions,
  ScheduleOverlapPolicy,
  type ScheduleSpec,
} from '@temporalio/client';
import { ConfigError } from '../../core/errors';
import {
  cronProblem,
  DEFAULT_CATCHUP_WINDOW,
  MIN_CATCHUP_MS,
  MIN_EVERY_MS,
  type OverlapChoice,
  parseScheduleDuration,
  SCHEDULED_GOAL_WORKFLOW_TYPE,
  type ScheduledGoalInput,
  scheduleIdOf,
} from '../../core/goal-schedule';
import { clipBytes } from '../../core/text';
import { escapeUiMarkdown } from '../../core/ui-markdown';
import { projectHash } from '../../store/session-id';
import type { CliContext } from '../context';
import { goalFromOptions } from '../goal-definition';
import type { GoalOptions } from '../goal-options';
import { objectiveFrom } from '../objective-input';
import { notice, printJson, say } from '../output';
import { requireSandboxForGoal } from '../sandbox-check';
import { printSchedule } from '../schedule-print';
import { checkScheduleName, type ScheduleMemo, scheduleView } from '../schedule-view';
import { projectRealPath } from '../session-names';
import { hasLiveWorker, noWorkerMessage } from '../worker-presence';

/** The Web UI's one-line summary of a firing is capped at 200 bytes. */
const SUMMARY_MAX_BYTES = 200;
/** gRPC's INVALID_ARGUMENT: the server refused the schedule for another reason than its spec. */
const GRPC_INVALID_ARGUMENT = 3;

/** The options of `schedule add`: those of `start`, the spec and the policies. */
export interface ScheduleAddOptions extends GoalOptions {
  every?: string;
  cron?: string;
  overlap: OverlapChoice;
  catchupWindow?: string;
  paused?: boolean;
  timeZone?: string;
}

/** The schedule's spec and how it is said, from --every or --cron (exactly one). */
function specOf(options: ScheduleAddOptions): { spec: ScheduleSpec; text: string } {
  if ((options.every === undefined) === (options.cron === undefined))
    throw new ConfigError(
      'say when the goals start: --every <duration> (e.g. 6h) or --cron "<spec>" (e.g. "0 3 * * *"), one of the two',
    );
  if (options.every !== undefined) {
    if (options.timeZone !== undefined)
      throw new ConfigError(
        '--time-zone applies to --cron only; an --every interval is the same in every zone',
      );
    const every = parseScheduleDuration(options.every, '--every', MIN_EVERY_MS);
    if ('problem' in every) throw new ConfigError(every.problem);
    return { spec: { intervals: [{ every: every.ms }] }, text: `every ${options.every.trim()}` };
  }
  const given = (options.cron ?? '').trim();
  // Temporal knows its macros in lower case only.
  const cron = given.startsWith('@') ? given.toLowerCase() : given;
  const problem = cronProblem(cron);
  if (problem) throw new ConfigError(problem);
  const timezone = options.timeZone === undefined ? undefined : checkTimeZone(options.timeZone);
  return {
    spec: { cronExpressions: [cron], ...(timezone ? { timezone } : {}) },
    text: `cron "${cron}" (${timezone ?? 'UTC'})`,
  };
}

/** An IANA time zone name (`Europe/Berlin`), checked against the zones this Node knows. */
function checkTimeZone(zone: string): string {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone.trim() });
  } catch {
    throw new ConfigError(
      `--time-zone must be an IANA time zone such as Europe/Berlin or America/New_York, got "${zone}"`,
    );
  }
  return zone.trim();
}

/** Adds the schedule; exit 2 on a bad spec, a bad goal option or a name already taken. */
export async function scheduleAddCommand(
  context: CliContext,
  name: string,
  objectiveArg: string,
  options: ScheduleAddOptions & { json?: boolean },
): Promise<number> {
  checkScheduleName(name);
  const { spec, text } = specOf(options);
  const catchup = parseScheduleDuration(
    options.catchupWindow ?? DEFAULT_CATCHUP_WINDOW,
    '--catchup-window',
    MIN_CATCHUP_MS,
  );
  if ('problem' in catchup) throw new ConfigError(catchup.problem);
  // The same checks as `start`: a goal that `start` would refuse never becomes a schedule.
  const goal = goalFromOptions(objectiveFrom(objectiveArg), options, context.settings, '', false);
  await requireSandboxForGoal(goal);
  const projectDir = projectRealPath(goal.workspace);
  const input: ScheduledGoalInput = {
    schedule: name,
    goal,
    projectDir,
    projectHash: projectHash(projectDir),
    idHash: projectHash(goal.workspace),
  };
  const client = await context.temporal();
  const taskQueue = await context.taskQueue();
  const scheduleId = scheduleIdOf(taskQueue, name);
  const schedule: ScheduleOptions = {
    scheduleId,
    spec,
    action: {
      type: 'startWorkflow',
      workflowType: SCHEDULED_GOAL_WORKFLOW_TYPE,
      // Temporal appends each firing's time to this id.
      workflowId: scheduleId,
      taskQueue,
      args: [input],
      staticSummary: clipBytes(
        escapeUiMarkdown(`${name}: ${goal.objective.replace(/\s+/g, ' ')}`),
        SUMMARY_MAX_BYTES,
      ),
    },
    policies: {
      overlap:
        options.overlap === 'buffer-one' ? ScheduleOverlapPolicy.BUFFER_ONE : ScheduleOverlapPolicy.SKIP,
      catchupWindow: catchup.ms,
    },
    memo: { spec: text } satisfies ScheduleMemo,
    state: {
      paused: options.paused === true,
      note: options.paused ? 'added paused (goalrun schedule add --paused)' : `goalrun schedule ${name}`,
    },
  };
  try {
    await client.schedule.create(schedule);
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning)
      throw new ConfigError(
        `a schedule named "${name}" exists already; goalrun schedule show ${name} shows it, goalrun schedule delete ${name} removes it`,
      );
    // The SDK turns the server's "Invalid schedule spec" into a TypeError carrying its words.
    if (err instanceof TypeError)
      throw new ConfigError(`Temporal refused the schedule's spec: ${err.message}`);
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    if (code === GRPC_INVALID_ARGUMENT)
      throw new ConfigError(`Temporal refused the schedule: ${(err as Error).message}`);
    throw err;
  }
  const view = await scheduleView(client, name, await client.schedule.getHandle(scheduleId).describe());
  if (options.json) printJson(view);
  else {
    say(
      `added schedule ${name} (${scheduleId}): ${text}, overlap ${view.overlap}${view.paused ? ', paused' : ''}`,
    );
    printSchedule(view);
  }
  if ((await hasLiveWorker(client, taskQueue)) === false)
    notice(noWorkerMessage(taskQueue, context.workerHint()));
  return 0;
}
