/**
 * Failover to the backup model (issue 27 §3): pure rules, shared by the model-step activity (which
 * counts the provider's failures across its attempts) and the goal workflow (which decides the model
 * of each step, switches, and probes the primary again after a cooldown).
 */
import { FailureType } from './errors';

/** Retryable provider failures in a row after which the next steps go to the backup (config failover_after_failures). */
export const DEFAULT_FAILOVER_AFTER_FAILURES = 3;
/** A provider outage longer than this many minutes moves the goal to the backup (config failover_after_minutes). */
export const DEFAULT_FAILOVER_AFTER_MINUTES = 3;
/** How long the goal stays on the backup before it probes the primary (config failover_cooldown_s). */
export const DEFAULT_FAILOVER_COOLDOWN_S = 10 * 60;
/** A probe of the primary fails over again at its first failover-worthy failure. */
export const PROBE_AFTER_FAILURES = 1;
/** Milliseconds per minute. */
const MS_PER_MINUTE = 60_000;
/** HTTP statuses from here up are server faults (500, 502, 503, 504, 529 overloaded): reasons to switch. */
const SERVER_ERROR_MIN_STATUS = 500;

/** When a step gives up on its model for the backup: the rule the model-step activity applies. */
export interface FailoverRule {
  /** Failover-worthy failures in a row (N). */
  afterFailures: number;
  /** Minutes since the first of them (M). */
  afterMinutes: number;
}

/** The goal's failover settings (config failover_*); the defaults where absent. */
export interface FailoverSettings {
  afterFailures?: number;
  afterMinutes?: number;
  cooldownS?: number;
}

/** What the activity carries from attempt to attempt (heartbeat details): the run of failures so far. */
export interface FailureRun {
  failures: number;
  /** Epoch ms of the first failure of the run, or null when there is none. */
  sinceMs: number | null;
}

/** No failure yet. */
export const NO_FAILURES: FailureRun = { failures: 0, sinceMs: null };

/**
 * Whether a provider failure is a reason to switch: an overloaded or failing server (5xx, 529), an
 * unreachable host, a broken or stalled stream. Never a 400, 401 or 403, a context overflow, a rate
 * limit (429) or an exhausted quota, which another model does not cure or which goalrun waits out.
 * `status` is the HTTP status when the provider answered with one.
 */
export function isFailoverReason(type: string | undefined, status?: number): boolean {
  switch (type) {
    case FailureType.ProviderUnavailable:
      // 408, 409 and 429 are the provider asking us to slow down, not a provider that is down.
      return status === undefined || status >= SERVER_ERROR_MIN_STATUS;
    case FailureType.ProviderStalled:
    case FailureType.ProviderUnreachable:
    case FailureType.ProviderOutage:
      return true;
    default:
      return false;
  }
}

/** The run of failures after one more attempt failed (`worthy`: a reason to switch). */
export function nextFailureRun(run: FailureRun, worthy: boolean, nowMs: number): FailureRun {
  if (!worthy) return run;
  return { failures: run.failures + 1, sinceMs: run.sinceMs ?? nowMs };
}

/** Whether a run of failures calls for the backup: N of them, or an outage of M minutes. */
export function failoverDue(run: FailureRun, rule: FailoverRule, nowMs: number): boolean {
  if (run.failures === 0 || run.sinceMs === null) return false;
  if (run.failures >= rule.afterFailures) return true;
  return nowMs - run.sinceMs >= rule.afterMinutes * MS_PER_MINUTE;
}

/** Where a model's requests go. */
export interface ModelRoute {
  model: string;
  baseUrl?: string;
}

/** The failover part of a goal's durable state (absent: the goal never switched). */
export interface FailoverState {
  /** The goal's own model, which it returns to. */
  primary: ModelRoute;
  /** Which model the goal's steps use now. */
  active: 'primary' | 'backup';
  /** The step running now on the primary is a probe: one failure sends the goal back to the backup. */
  probing: boolean;
  /** Workflow time (ms) of the last switch to the backup, or null. */
  switchedAtMs: number | null;
  /** Workflow time (ms) after which the next step probes the primary, or null when not on the backup. */
  probeAtMs: number | null;
  /** Switches so far, both ways. */
  switches: number;
}

/** The settings with their defaults filled in. */
export function failoverSettingsOf(settings: FailoverSettings | undefined): Required<FailoverSettings> {
  return {
    afterFailures: settings?.afterFailures ?? DEFAULT_FAILOVER_AFTER_FAILURES,
    afterMinutes: settings?.afterMinutes ?? DEFAULT_FAILOVER_AFTER_MINUTES,
    cooldownS: settings?.cooldownS ?? DEFAULT_FAILOVER_COOLDOWN_S,
  };
}

/**
 * The rule a step's activity applies, or null when the step has nowhere to go: no backup, or it
 * already runs on the backup. A probe of the primary goes back at its first failure.
 */
export function stepFailoverRule(
  backup: string | undefined,
  state: FailoverState | null | undefined,
  settings: FailoverSettings | undefined,
): FailoverRule | null {
  if (!backup) return null;
  if (state?.active === 'backup') return null;
  const { afterFailures, afterMinutes } = failoverSettingsOf(settings);
  return { afterFailures: state?.probing ? PROBE_AFTER_FAILURES : afterFailures, afterMinutes };
}

/** The state after the goal moved to the backup at `nowMs` (from `primary`, the goal's model route then). */
export function switchedToBackup(
  state: FailoverState | null | undefined,
  primary: ModelRoute,
  nowMs: number,
  settings: FailoverSettings | undefined,
): FailoverState {
  const { cooldownS } = failoverSettingsOf(settings);
  return {
    primary: state?.primary ?? primary,
    active: 'backup',
    probing: false,
    switchedAtMs: nowMs,
    probeAtMs: nowMs + cooldownS * 1000,
    switches: (state?.switches ?? 0) + 1,
  };
}

/** Whether the next step should probe the primary: the goal is on the backup and its cooldown is over. */
export function probeDue(state: FailoverState | null | undefined, nowMs: number): boolean {
  return state?.active === 'backup' && state.probeAtMs !== null && nowMs >= state.probeAtMs;
}

/** The state while a step probes the primary. */
export function probingPrimary(state: FailoverState): FailoverState {
  return { ...state, active: 'primary', probing: true, probeAtMs: null, switches: state.switches + 1 };
}

/** The state after a step on the primary succeeded: a probe that succeeded means the goal is back. */
export function primaryAnswered(state: FailoverState): FailoverState {
  return state.probing ? { ...state, probing: false } : state;
}
