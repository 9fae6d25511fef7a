/**
 * Which limit stopped a goal and the flag that raises it, so that `run`, `watch` and `resume` can say
 * how to go on (`--max-steps 20`) instead of suggesting a plain resume that would stop again at once.
 */
import type { GoalLimits } from '../core/goal';
import { checkLimits, LIMIT_FLAGS, type LimitKind } from '../core/goal-rules';
import { plural } from '../core/text';

export type { LimitKind };

/** What one limit is called, its flag, and its unit. */
export const LIMITS: Record<
  LimitKind,
  { name: string; flag: string; unit: string; field: 'maxSteps' | 'maxIterations' | 'maxMinutes' }
> = {
  steps: { name: 'step limit', flag: LIMIT_FLAGS.steps, unit: 'step', field: 'maxSteps' },
  iterations: {
    name: 'iteration limit',
    flag: LIMIT_FLAGS.iterations,
    unit: 'iteration',
    field: 'maxIterations',
  },
  minutes: { name: 'time limit', flag: LIMIT_FLAGS.minutes, unit: 'minute', field: 'maxMinutes' },
};

/** The counters of a saved goal that the limits apply to. */
export interface LimitCounters {
  steps: number;
  iteration: number;
  elapsedMs: number;
}

/**
 * The first limit that a goal with these counters is at or over (the same rules as the workflow's
 * stop check), or null when it may run again.
 */
export function limitHit(counters: LimitCounters, limits: GoalLimits): LimitKind | null {
  return checkLimits(counters, limits, counters.elapsedMs)?.limit ?? null;
}

/** A value of the limit that lets the goal go on: double what it has used, and more than now. */
export function raisedLimit(kind: LimitKind, counters: LimitCounters, limits: GoalLimits): number {
  const used =
    kind === 'steps'
      ? counters.steps
      : kind === 'iterations'
        ? counters.iteration
        : Math.ceil(counters.elapsedMs / 60_000);
  return Math.max(limits[LIMITS[kind].field] as number, used) * 2;
}

/** The limit a `limit_reached` reason names; one home with the Web UI's headline. */
export { limitOfReason } from '../core/goal-headline';

/** `the step limit (3 steps)`. */
export function describeLimit(kind: LimitKind, value: number): string {
  return `the ${LIMITS[kind].name} (${plural(value, LIMITS[kind].unit)})`;
}

/** The advice for a goal stopped at a limit: the command that raises it. */
export function raiseLimitAdvice(sessionId: string, kind: LimitKind, suggested: number): string {
  return `to go on, raise the ${LIMITS[kind].name}: goalrun resume ${sessionId} ${LIMITS[kind].flag} ${suggested}`;
}

/**
 * The advice for a goal in budget_reached, from its reason: the command that raises the cap that
 * stopped it (the daily budget, the money cap or the token cap) with a value twice the cap when the
 * reason names it. `goalrun limits` reaches a goal still waiting at its cap; once the wait has ended
 * the goal goes on with `goalrun resume` and the same flag.
 */
export function raiseBudgetAdvice(sessionId: string, reason: string | null | undefined): string {
  const text = reason ?? '';
  if (/daily budget/.test(text)) {
    const cap = /of \$([\d.]+) used today/.exec(text)?.[1];
    const value = cap ? doubled(Number(cap)) : 'N';
    return `to go on, raise the daily budget of every goal: goalrun budget set --daily-usd ${value} (a goal whose wait has ended: then goalrun resume ${sessionId})`;
  }
  const tokens = /^token budget reached/.test(text);
  const cap = (tokens ? /spent of (\d+)/ : /spent of \$([\d.]+)/).exec(text)?.[1];
  const flag = tokens ? '--max-tokens' : '--max-cost-usd';
  const value = cap ? (tokens ? String(Number(cap) * 2) : doubled(Number(cap))) : 'N';
  const name = tokens ? 'token cap' : 'money cap';
  return `to go on, raise the ${name}: goalrun limits ${sessionId} ${flag} ${value} while it waits, or goalrun resume ${sessionId} ${flag} ${value} once its wait has ended`;
}

/** Twice a dollar amount, without float noise (`0.06`, not `0.060000000000000005`). */
function doubled(usd: number): string {
  return String(Number((usd * 2).toFixed(4)));
}
