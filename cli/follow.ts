/** Follows a goal live until it ends: prints its actions as they happen, then the outcome. */
import { FINAL_STATUSES, type GoalStatus } from '../core/goal';
import { workflowIdOf } from '../workflows/definitions';
import type { CliContext } from './context';
import { ExitCode, exitCodeOf } from './exit-codes';
import { loadStatus, queryState, type StatusView } from './goal-status';
import { formatDuration, notice, printJson, say } from './output';

/** How often the CLI asks a running goal for news. */
const POLL_INTERVAL_MS = 700;

/** Options of followGoal. */
export interface FollowOptions {
  json?: boolean;
  /** Resolves when the user presses Ctrl-C. */
  interrupted?: Promise<void>;
}

/** Temporal's closed states mapped to goal statuses, for goals that ended without a checkpoint. */
const CLOSED_STATUS: Record<string, GoalStatus> = {
  CANCELLED: 'cancelled',
  TERMINATED: 'failed',
  TIMED_OUT: 'failed',
  FAILED: 'failed',
  COMPLETED: 'completed',
};

/** Follows the goal of a session until it ends or the user interrupts; returns the exit code. */
export async function followGoal(
  context: CliContext,
  sessionId: string,
  options: FollowOptions = {},
): Promise<number> {
  const client = await context.temporal();
  const handle = client.workflow.getHandle(workflowIdOf(sessionId));
  let interrupted = false;
  options.interrupted?.then(() => {
    interrupted = true;
  });
  let printed = 0;
  let temporalStatus = 'RUNNING';
  while (!interrupted) {
    temporalStatus = (await handle.describe()).status.name;
    if (temporalStatus !== 'RUNNING') break;
    const live = await queryState(handle);
    // A goal at a limit keeps its workflow open for /limits, but for a follower it has ended.
    if (live && FINAL_STATUSES.includes(live.status)) {
      temporalStatus = 'WAITING_AT_LIMIT';
      if (!options.json) {
        for (const action of live.recent) if (action.n > printed) say(`  ${action.text}`);
        printed = Math.max(printed, ...live.recent.map((action) => action.n));
      }
      break;
    }
    if (live && !options.json) {
      for (const action of live.recent) {
        if (action.n > printed) say(`  ${action.text}`);
      }
      printed = Math.max(printed, ...live.recent.map((action) => action.n));
    }
    await Promise.race([sleep(POLL_INTERVAL_MS), options.interrupted ?? new Promise(() => undefined)]);
  }
  if (interrupted) {
    say('');
    say(`Stopped following. The goal keeps its state in Temporal; nothing is lost.`);
    say(`  watch it:   goalrun watch ${sessionId}`);
    say(`  resume it:  goalrun resume ${sessionId}   (hosts a worker and follows it)`);
    say(`  cancel it:  goalrun cancel ${sessionId}`);
    return ExitCode.interrupted;
  }
  const final = await finalStatus(context, sessionId, temporalStatus);
  if (options.json) {
    printJson(final);
  } else {
    for (const action of final.recent) if (action.n > printed) say(`  ${action.text}`);
    say(describeOutcome(final));
  }
  return exitCodeOf(final.status);
}

/** The final status of a closed goal; Temporal's closed state wins over a stale checkpoint. */
async function finalStatus(
  context: CliContext,
  sessionId: string,
  temporalStatus: string,
): Promise<StatusView> {
  const view = await loadStatus(context, sessionId);
  if (view.status === 'running') {
    const status = CLOSED_STATUS[temporalStatus] ?? 'failed';
    notice(`the workflow ended as ${temporalStatus} without a final checkpoint`);
    return { ...view, status, reason: view.reason ?? `workflow ${temporalStatus.toLowerCase()}` };
  }
  return view;
}

/** One paragraph on how a goal ended. */
export function describeOutcome(view: StatusView): string {
  const lines = [
    `goal ${view.status}${view.reason ? `: ${view.reason}` : ''} — ${view.steps} steps, ${view.iteration} iterations, ${formatDuration(view.elapsedMs)}, ${view.usage.totalTokens} tokens`,
  ];
  if (view.finishSummary) lines.push(`summary: ${view.finishSummary}`);
  if (view.status === 'cancelled' || view.status === 'limit_reached' || view.status === 'blocked') {
    lines.push(`resume with: goalrun resume ${view.sessionId}`);
  }
  return lines.join('\n');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
