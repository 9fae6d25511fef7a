/**
 * What a notify hook is told when a goal's status changes: which statuses call for someone, and the
 * command that moves the goal on from each. Pure, so the workflow builds it and tests check it.
 */
import { clip } from '../text';

/**
 * Statuses a notify hook hears about: the goal ended, or waits for a person. `budget_reached` and
 * `stalled` are named for the statuses later releases add; they are plain strings here.
 */
export const NOTIFY_STATUSES: readonly string[] = [
  'completed',
  'failed',
  'blocked',
  'waiting_approval',
  'awaiting_user',
  'paused',
  'limit_reached',
  'budget_reached',
  'stalled',
];

/** The JSON a notify hook reads on stdin (with `event`, `workspace` and `time` added by the tool host). */
export interface NotifyStatus {
  session_id: string;
  workflow_id: string;
  status: string;
  reason: string | null;
  objective: string;
  cost_usd: number;
  steps: number;
  iterations: number;
  /** The command that moves the goal on from this status. */
  resume_command: string;
  /** For waiting_approval: what waits, and the commands that answer it. */
  approval?: { command: string; justification: string; approve_command: string; deny_command: string };
}

/** Longest objective carried in a notify payload. */
const OBJECTIVE_MAX_CHARS = 300;

/** The command that moves a goal on from a status. */
export function resumeCommandFor(status: string, sessionId: string): string {
  switch (status) {
    case 'waiting_approval':
      return `goalrun approve ${sessionId}`;
    case 'paused':
      return `goalrun unpause ${sessionId}`;
    case 'limit_reached':
      return `goalrun limits ${sessionId} --max-steps N   (or: goalrun resume ${sessionId} --max-steps N)`;
    case 'budget_reached':
      return `goalrun limits ${sessionId} --max-cost-usd N   (the daily budget: goalrun budget set --daily-usd N)`;
    case 'stalled':
      return `goalrun status ${sessionId}`;
    default:
      return `goalrun resume ${sessionId} --message "…"`;
  }
}

/** The notify payload of a goal's status. */
export function notifyStatus(input: {
  sessionId: string;
  workflowId: string;
  status: string;
  reason: string | null;
  objective: string;
  costUsd: number;
  steps: number;
  iterations: number;
  approval?: { command: string; justification: string } | null;
}): NotifyStatus {
  const objective = clip(input.objective, OBJECTIVE_MAX_CHARS);
  return {
    session_id: input.sessionId,
    workflow_id: input.workflowId,
    status: input.status,
    reason: input.reason,
    objective,
    cost_usd: input.costUsd,
    steps: input.steps,
    iterations: input.iterations,
    resume_command: resumeCommandFor(input.status, input.sessionId),
    ...(input.status === 'waiting_approval' && input.approval
      ? {
          approval: {
            command: input.approval.command,
            justification: input.approval.justification,
            approve_command: `goalrun approve ${input.sessionId}`,
            deny_command: `goalrun deny ${input.sessionId} --reason "…"`,
          },
        }
      : {}),
  };
}
