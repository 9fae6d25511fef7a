/**
 * The auto-compact settings and failure budget (spec S-AUTO, S-BUDGET): summarizer failures never abort
 * the run; each is noted, and after a few in a row auto-compact pauses instead of burning a failing call
 * every step. A successful compaction resets the counter. Kept in workflow state, so everything is pure.
 */

import { clip } from '../text';
import {
  AUTO_COMPACT_ENABLED_DEFAULT,
  AUTO_COMPACT_MAX_FAILURES_DEFAULT,
  AUTO_COMPACT_TARGET_PCT_DEFAULT,
  AUTO_COMPACT_THRESHOLD_PCT_DEFAULT,
  FAILURE_REASON_MAX_CHARS,
} from './thresholds';

/** Auto-compact settings and the failure counter. */
export interface AutoCompactState {
  enabled: boolean;
  /** Percentage of the effective window at which auto-compact triggers. */
  thresholdPct: number;
  /** The low-water mark every compaction aims below, as a percentage of the usable input (absent in older states). */
  targetPct?: number;
  /** Consecutive summarizer failures before auto-compact pauses. */
  maxFailures: number;
  consecutiveFailures: number;
  paused: boolean;
  /** The step before which the last successful compaction (summary or prune) ran. */
  lastCompactedAtStep: number | null;
}

/**
 * The user-facing settings (`auto_compact_enabled`, `auto_compact_threshold_pct`, `auto_compact_target_pct`,
 * `auto_compact_max_failures`).
 */
export interface AutoCompactSettings {
  enabled?: boolean;
  thresholdPct?: number;
  targetPct?: number;
  maxFailures?: number;
}

/** A whole number within bounds, or the fallback when the value is not a number at all. */
function bounded(value: number | undefined, min: number, max: number, fallback: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, Math.round(value)));
}

/** The state of a goal that has not compacted yet; settings out of range are clamped, not rejected. */
export function initialAutoCompactState(settings: AutoCompactSettings = {}): AutoCompactState {
  return {
    enabled: settings.enabled ?? AUTO_COMPACT_ENABLED_DEFAULT,
    thresholdPct: bounded(settings.thresholdPct, 1, 100, AUTO_COMPACT_THRESHOLD_PCT_DEFAULT),
    targetPct: bounded(settings.targetPct, 1, 100, AUTO_COMPACT_TARGET_PCT_DEFAULT),
    maxFailures: bounded(settings.maxFailures, 1, Number.MAX_SAFE_INTEGER, AUTO_COMPACT_MAX_FAILURES_DEFAULT),
    consecutiveFailures: 0,
    paused: false,
    lastCompactedAtStep: null,
  };
}

/** The first line of a failure reason, clipped: provider errors can be long and multi-line. */
function shortReason(reason: string): string {
  const line = reason.trim().split('\n')[0].trim() || 'unknown error';
  return clip(line, FAILURE_REASON_MAX_CHARS);
}

/** Counts a summarizer failure; returns the new state and the one-line note for the transcript. */
export function recordSummarizerFailure(
  state: AutoCompactState,
  reason: string,
  sessionId: string,
  manual = false,
): { state: AutoCompactState; note: string } {
  const failures = state.consecutiveFailures + 1;
  const why = shortReason(reason);
  const retry = `run goalrun compact ${sessionId} to retry`;
  if (manual) {
    // A user's `goalrun compact`: the note says what they ran; the failure still counts for auto-compact.
    const paused = state.paused || failures >= state.maxFailures;
    return {
      state: { ...state, consecutiveFailures: failures, paused },
      note: `compaction failed (${why}); ${paused ? 'auto-compact is paused' : `auto-compact failure ${failures} of ${state.maxFailures} before it pauses`}: ${retry}`,
    };
  }
  if (state.paused) {
    // Only a forced (last-resort) compaction runs while paused.
    return {
      state: { ...state, consecutiveFailures: failures },
      note: `auto-compact failed again (${why}); it stays paused: ${retry}`,
    };
  }
  if (failures >= state.maxFailures) {
    return {
      state: { ...state, consecutiveFailures: failures, paused: true },
      note: `auto-compact paused after ${failures} consecutive failures (last: ${why}); ${retry}`,
    };
  }
  return {
    state: { ...state, consecutiveFailures: failures },
    note: `auto-compact failed (${why}): failure ${failures} of ${state.maxFailures} before it pauses`,
  };
}

/** A summary was stored (automatic, forced or manual): the counter resets and auto-compact resumes. */
export function recordCompactionSuccess(state: AutoCompactState, stepNumber: number): AutoCompactState {
  return { ...state, consecutiveFailures: 0, paused: false, lastCompactedAtStep: stepNumber };
}

/**
 * Pruning alone was enough. It is no summarizer success, so the failure counter stays; it still counts
 * as a compaction for the rule that the next step does not compact again.
 */
export function recordPruneOnly(state: AutoCompactState, stepNumber: number): AutoCompactState {
  return { ...state, lastCompactedAtStep: stepNumber };
}

/** Turns auto-compact on or off; turning it on is a deliberate retry, so it also lifts a pause. */
export function setAutoCompact(state: AutoCompactState, enabled: boolean): AutoCompactState {
  return enabled ? { ...state, enabled, consecutiveFailures: 0, paused: false } : { ...state, enabled };
}
