/**
 * The one line that opens a goal's current details in the Temporal Web UI: `status — reason — next
 * command`, e.g. `paused — runaway breaker: … — goalrun unpause <id>`. The UI's header shows only
 * Temporal's own status (a paused goal reads Running), so this line says what the goal is doing and
 * what a person types to move it on.
 */
import { resumeCommandFor } from './extensions/notify-status';
import type { GoalStatus } from './goal';
import { LIMIT_FLAGS, type LimitKind } from './goal-rules';
import type { GoalSnapshot } from './goal-snapshot';
import { clip } from './text';

/** Longest reason the headline carries; the full one is in `goalrun status`. */
export const HEADLINE_REASON_MAX_CHARS = 200;

/** How each status reads in the headline. */
const STATUS_WORDS: Record<GoalStatus, string> = {
  running: 'running',
  paused: 'paused',
  waiting_approval: 'waiting for approval',
  completed: 'completed',
  blocked: 'blocked',
  failed: 'failed',
  cancelled: 'cancelled',
  limit_reached: 'limit reached',
  cleared: 'cleared',
  budget_reached: 'waiting for budget',
  waiting_quota: 'waiting for quota',
  waiting_store: 'waiting for the store',
  stalled: 'stalled',
  awaiting_user: 'awaiting your sign-off',
  budget_exhausted: 'budget exhausted',
};

/** What the headline needs of a goal. */
export type HeadlineFacts = Pick<
  GoalSnapshot,
  'sessionId' | 'status' | 'reason' | 'steps' | 'iteration' | 'approval'
>;

/** `status — reason — next command` for a goal. */
export function goalHeadline(goal: HeadlineFacts): string {
  return [STATUS_WORDS[goal.status] ?? goal.status, reasonOf(goal), nextCommand(goal)].join(' — ');
}

/** The reason, or what stands in for one: the counters of a running goal, the command awaiting approval. */
function reasonOf(goal: HeadlineFacts): string {
  if (goal.status === 'running' && !goal.reason) return `step ${goal.steps}, iteration ${goal.iteration}`;
  if (goal.status === 'waiting_approval' && goal.approval) {
    return clip(
      `\`${goal.approval.command}\` needs approval to run outside the sandbox`,
      HEADLINE_REASON_MAX_CHARS,
    );
  }
  // The budget reason ends with the raise command, which the headline shows on its own.
  const reason = (goal.reason ?? 'no reason given').replace(/; raise it with: .*$/, '');
  return clip(reason, HEADLINE_REASON_MAX_CHARS);
}

/** The command that moves the goal on (or, for a running goal, follows it). */
export function nextCommand(goal: HeadlineFacts): string {
  const id = goal.sessionId;
  switch (goal.status) {
    case 'running':
      return `goalrun watch ${id}`;
    case 'stalled':
      // No step has finished for a while: what the goal is stuck on is in its status.
      return `goalrun status ${id}`;
    case 'waiting_approval':
      return `goalrun approve ${id} or goalrun deny ${id}`;
    case 'awaiting_user':
      return `goalrun approve ${id} or goalrun deny ${id} --reason "…"`;
    case 'budget_reached':
      if (goal.reason?.startsWith('daily budget')) return 'goalrun budget set --daily-usd N';
      return `goalrun limits ${id} ${goal.reason?.startsWith('token budget') ? '--max-tokens' : '--max-cost-usd'} N`;
    case 'waiting_quota':
    case 'waiting_store':
      return `goes on by itself; goalrun cancel ${id} stops it`;
    case 'limit_reached':
      return `goalrun limits ${id} ${LIMIT_FLAGS[limitOfReason(goal.reason) ?? 'steps']} N`;
    case 'cleared': {
      const next = /session (\S+)$/.exec(goal.reason ?? '')?.[1];
      return next ? `goalrun watch ${next}` : `goalrun sessions`;
    }
    default:
      return resumeCommandFor(goal.status, id);
  }
}

/** The limit a `limit_reached` reason names (`step limit reached (3 steps)`), or null. */
export function limitOfReason(reason: string | null | undefined): LimitKind | null {
  if (!reason) return null;
  if (/^step limit/.test(reason)) return 'steps';
  if (/^iteration limit/.test(reason)) return 'iterations';
  if (/^time limit/.test(reason)) return 'minutes';
  return null;
}
