/**
 * A goal schedule as `schedule list|show|add` show it (issue 28 §3): read from Temporal's
 * description of the Schedule, and, for each firing, from the firing's memo (its goal's name and
 * session) and the goal's own GoalStatus search attribute.
 */
import {
  type Client,
  type ScheduleDescription,
  type ScheduleExecutionActionResult,
  ScheduleNotFoundError,
} from '@temporalio/client';
import { ConfigError } from '../core/errors';
import {
  type ScheduledGoalInput,
  type ScheduledGoalMemo,
  scheduleIdOf,
  scheduleNameProblem,
} from '../core/goal-schedule';
import { workflowIdOf } from '../core/workflow-names';
import { GoalStatusKey } from '../workflows/definitions';

/** Next run times `show` lists (`list` shows the first). */
const NEXT_RUNS_SHOWN = 3;

/** The memo goalrun gives a schedule: its spec as the user wrote it (Temporal keeps a cron as calendars). */
export interface ScheduleMemo {
  spec: string;
}

/** One firing of a schedule: when, its workflow, and its goal once the firing has made it. */
export interface FiringView {
  scheduledAt: string;
  startedAt: string;
  workflowId: string;
  goal: string | null;
  sessionId: string | null;
  /** The goal's status (GoalStatus), else the firing workflow's (e.g. running before its goal starts). */
  status: string;
}

/** A schedule as `show --json` prints it. */
export interface ScheduleView {
  name: string;
  scheduleId: string;
  spec: string;
  paused: boolean;
  note: string | null;
  overlap: string;
  catchupWindowMs: number;
  objective: string | null;
  workspace: string | null;
  model: string | null;
  nextRuns: string[];
  /** Firings taken, and firings skipped because a goal ran (overlap skip) or the catch-up window was missed. */
  counts: { taken: number; skippedOverlap: number; missedCatchupWindow: number };
  /** Recent firings, oldest first (Temporal keeps the last ten). */
  recent: FiringView[];
  /** Firings whose workflow runs now (with skip, at most one). */
  running: FiringView[];
}

/** Checks a schedule name given on the command line (exit 2 on a bad one). */
export function checkScheduleName(name: string): string {
  const problem = scheduleNameProblem(name);
  if (problem) throw new ConfigError(problem);
  return name;
}

/** The schedule's description, or a usage error naming the schedules there are. */
export async function describeNamed(
  client: Client,
  taskQueue: string,
  name: string,
): Promise<ScheduleDescription> {
  checkScheduleName(name);
  try {
    return await client.schedule.getHandle(scheduleIdOf(taskQueue, name)).describe();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError)
      throw new ConfigError(`no schedule named "${name}" in this store; goalrun schedule list shows them`);
    throw err;
  }
}

/** The view of a described schedule; `firings` false skips reading each recent firing (list). */
export async function scheduleView(
  client: Client,
  name: string,
  description: ScheduleDescription,
  firings: 'all' | 'last' = 'all',
): Promise<ScheduleView> {
  const input = (description.action.args?.[0] as ScheduledGoalInput | undefined) ?? null;
  const memo = (description.memo ?? {}) as Partial<ScheduleMemo>;
  const recentActions =
    firings === 'all' ? description.info.recentActions : description.info.recentActions.slice(-1);
  const recent = await Promise.all(
    recentActions.map((each) => firingView(client, each.action, each.scheduledAt, each.takenAt)),
  );
  const running = await Promise.all(
    description.info.runningActions.map((each) => firingView(client, each, null, null)),
  );
  return {
    name,
    scheduleId: description.scheduleId,
    spec: memo.spec ?? 'custom (not set by goalrun)',
    paused: description.state.paused,
    note: description.state.note ?? null,
    overlap: overlapText(description.policies.overlap),
    catchupWindowMs: description.policies.catchupWindow,
    objective: input?.goal.objective ?? null,
    workspace: input?.goal.workspace ?? null,
    model: input?.goal.model ?? null,
    nextRuns: description.info.nextActionTimes.slice(0, NEXT_RUNS_SHOWN).map((time) => time.toISOString()),
    counts: {
      taken: description.info.numActionsTaken,
      skippedOverlap: description.info.numActionsSkippedOverlap,
      missedCatchupWindow: description.info.numActionsMissedCatchupWindow,
    },
    recent,
    running,
  };
}

/** A Temporal overlap policy as `--overlap` names it. */
function overlapText(policy: string | undefined): string {
  return (policy ?? 'SKIP').toLowerCase().replace(/_/g, '-');
}

/** One firing: its memo names the goal; the goal's search attribute says how it is. */
async function firingView(
  client: Client,
  action: ScheduleExecutionActionResult,
  scheduledAt: Date | null,
  takenAt: Date | null,
): Promise<FiringView> {
  const { workflowId, firstExecutionRunId } = action.workflow;
  const firing = await client.workflow
    .getHandle(workflowId, firstExecutionRunId)
    .describe()
    .catch(() => null);
  const memo = (firing?.memo ?? {}) as Partial<ScheduledGoalMemo>;
  let status = firing ? firing.status.name.toLowerCase() : 'unknown';
  if (memo.sessionId) {
    const goal = await client.workflow
      .getHandle(workflowIdOf(memo.sessionId))
      .describe()
      .catch(() => null);
    status = goal?.typedSearchAttributes.get(GoalStatusKey) ?? goal?.status.name.toLowerCase() ?? status;
  }
  return {
    scheduledAt: (scheduledAt ?? firing?.startTime ?? new Date(0)).toISOString(),
    startedAt: (takenAt ?? firing?.startTime ?? new Date(0)).toISOString(),
    workflowId,
    goal: memo.goal ?? null,
    sessionId: memo.sessionId ?? null,
    status,
  };
}
