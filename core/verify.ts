/**
 * Verified completion (issue 27 §1): the checks a goal carries (`--verify`, config `verify`, a
 * project's `.goalrun/config.json`), run on the tool host when the model calls `finish` complete.
 * All of them must pass for the goal to end `completed` with `verified: true`; a failed finish goes
 * back to the model, and after `maxFailures` of them the goal ends blocked. A check that timed out
 * or could not start has failed: nothing here ever turns a missing answer into a pass. Pure, so it
 * runs in workflow code and unit tests alike.
 */
import { clip, plural } from './text';

/** Failed finishes (a check did not pass) before the goal ends blocked (config verify_max_failures). */
export const DEFAULT_VERIFY_MAX_FAILURES = 3;
/** How long one check may run before it is killed and counts as failed (config verify_timeout_s). */
export const DEFAULT_VERIFY_TIMEOUT_S = 600;
/** Most checks one goal carries: each runs at every finish. */
export const VERIFY_MAX_CHECKS = 20;
/** Longest command of a check (it travels in the goal's definition). */
export const VERIFY_COMMAND_MAX_CHARS = 2_000;
/** The end of a check's output kept in the state (and shown to the model); the whole is spooled. */
export const VERIFY_TAIL_MAX_CHARS = 1_200;

/** The checks of a goal and their rules, as its definition carries them. */
export interface VerifySettings {
  /** Shell commands run with `bash -c` in the workspace, in the goal's sandbox; exit 0 passes. */
  checks: string[];
  /** Failed finishes before the goal ends blocked; DEFAULT_VERIFY_MAX_FAILURES when absent. */
  maxFailures?: number;
  /** Seconds one check may run; DEFAULT_VERIFY_TIMEOUT_S when absent. */
  timeoutS?: number;
  /**
   * Criteria only a person can judge (`--sign-off`): once the checks pass, the goal waits in
   * `awaiting_user` with the evidence until `goalrun approve` (completed) or `deny --reason` (back to work).
   */
  signOff?: string[];
}

/** How one check ended. */
export interface CheckOutcome {
  command: string;
  /** The exit code; null when it was killed or never started. */
  exitCode: number | null;
  ok: boolean;
  /** Why it failed without an exit code: `timed out after 600 s`, `could not start: …`. */
  problem?: string;
  /** The whole output in the store, as the model reads it: `spool:ID` (tool-output). */
  spool?: string;
  /** The last characters of its output (stdout then stderr). */
  tail: string;
  ms?: number;
}

/** What the state remembers of the checks (absent for goals without checks). */
export interface VerificationState {
  /** Finishes refused because a check failed. */
  failures: number;
  /** The checks of the last finish that ran them. */
  checks: CheckOutcome[];
  /** Whether the last run of the checks passed them all (and a person signed off, when asked). */
  passed: boolean;
  /** Who signed the completion off, for a goal with sign-off criteria. */
  signedOff?: { by: string; reason: string | null };
}

/** How long a goal waits in awaiting_user for a person's sign-off before it ends blocked (fails closed). */
export const SIGN_OFF_WAIT_MINUTES = 7 * 24 * 60;
/** The prefix of the pending approval that stands for a sign-off (approve/deny answer it as an escalation). */
export const SIGN_OFF_PREFIX = 'sign-off: ';
/** Most characters of the evidence shown with a sign-off request. */
const SIGN_OFF_EVIDENCE_MAX_CHARS = 2_000;

/** What a person is asked to sign off, and the evidence: the model's claim and the checks it passed. */
export function signOffRequest(
  criteria: readonly string[],
  summary: string | null,
  checks: readonly CheckOutcome[],
  claimedParts: readonly string[] = [],
): { command: string; justification: string } {
  const evidence = [
    `the model says: ${summary ?? '(no summary)'}`,
    ...(claimedParts.length > 0 ? [`it claims: ${claimedParts.join('; ')}`] : []),
    ...checkLines(checks),
  ].join('\n');
  return {
    command: `${SIGN_OFF_PREFIX}${criteria.join('; ')}`,
    justification: clip(evidence, SIGN_OFF_EVIDENCE_MAX_CHARS),
  };
}

/** Whether a pending approval is a sign-off rather than an escalation out of the sandbox. */
export function isSignOff(approval: { command: string } | null | undefined): boolean {
  return approval?.command.startsWith(SIGN_OFF_PREFIX) === true;
}

/** The checks of a goal: the user's first, then those a project adds; duplicates and blanks dropped. */
export function mergeChecks(...lists: Array<readonly string[] | undefined>): string[] {
  const seen = new Set<string>();
  const merged: string[] = [];
  for (const list of lists) {
    for (const raw of list ?? []) {
      const command = raw.trim();
      if (command === '' || seen.has(command)) continue;
      seen.add(command);
      merged.push(command);
    }
  }
  return merged;
}

/** A problem with a goal's checks (too many, too long), or null. */
export function checksProblem(checks: readonly string[]): string | null {
  if (checks.length > VERIFY_MAX_CHECKS) {
    return `${plural(checks.length, 'check')} declared; at most ${VERIFY_MAX_CHECKS} are accepted`;
  }
  const long = checks.find((command) => command.length > VERIFY_COMMAND_MAX_CHARS);
  if (long !== undefined) {
    return `a check has ${long.length} characters; at most ${VERIFY_COMMAND_MAX_CHARS} are accepted: put it in a script`;
  }
  return null;
}

/** Whether a run of the checks passed: every check, and at least one (an empty run passes nothing). */
export function checksPassed(outcomes: readonly CheckOutcome[], declared: number): boolean {
  return outcomes.length === declared && declared > 0 && outcomes.every((check) => check.ok);
}

/** One line per check: `✓ npm test (exit 0)` / `✗ npm test (exit 1) spool:12`. */
export function checkLines(outcomes: readonly CheckOutcome[]): string[] {
  return outcomes.map((check) => {
    const how = check.problem ?? `exit ${check.exitCode}`;
    return `${check.ok ? 'passed' : 'FAILED'}: ${clip(check.command, 200)} (${how})${check.spool ? ` ${check.spool}` : ''}`;
  });
}

/** What the model reads when a check refused its finish: each check, and the failures' output. */
export function checksFailedText(
  outcomes: readonly CheckOutcome[],
  failures: number,
  maxFailures: number,
): string {
  const left = maxFailures - failures;
  const lines = [
    `[the goal is not finished: its checks did not pass (failed finish ${failures} of ${maxFailures}; ${
      left > 0
        ? `after ${plural(left, 'more failed finish', 'more failed finishes')} the goal ends blocked`
        : 'the goal ends blocked'
    })]`,
    ...checkLines(outcomes),
  ];
  for (const check of outcomes.filter((outcome) => !outcome.ok)) {
    lines.push(
      '',
      `--- ${clip(check.command, 200)}: end of its output${check.spool ? ` (all of it: tool-output {"id":"${check.spool}"})` : ''} ---`,
    );
    lines.push(check.tail === '' ? '(no output)' : check.tail);
  }
  lines.push('', 'Fix what the checks report, then call finish again.');
  return lines.join('\n');
}

/** The reason of a goal blocked by its checks: which failed, and the end of their output. */
export function checksBlockedReason(outcomes: readonly CheckOutcome[], failures: number): string {
  const failed = outcomes.filter((check) => !check.ok);
  const parts = failed.map(
    (check) =>
      `${clip(check.command, 200)} (${check.problem ?? `exit ${check.exitCode}`}${check.spool ? `, ${check.spool}` : ''}): ${clip(check.tail.trim().split('\n').slice(-5).join(' | '), 400)}`,
  );
  return `checks failed at ${plural(failures, 'finish', 'finishes')}: ${parts.join('; ')}`;
}

/** The end of a check's output, as the state keeps it. */
export function outputTail(text: string): string {
  const trimmed = text.trimEnd();
  return trimmed.length <= VERIFY_TAIL_MAX_CHARS ? trimmed : `…${trimmed.slice(-VERIFY_TAIL_MAX_CHARS)}`;
}

/** A part as compared: case and spacing do not make a part another. */
function partKey(part: string): string {
  return part.trim().replace(/\s+/g, ' ').toLowerCase();
}

/** The parts named first that a later claim leaves out (it narrows the objective); empty when none. */
export function droppedParts(first: readonly string[], claimed: readonly string[]): string[] {
  const now = new Set(claimed.map(partKey));
  return first.filter((part) => !now.has(partKey(part)));
}

/** What the model reads when its claim narrows the objective: the objective as written, the parts it left out. */
export function narrowedText(
  objective: string,
  first: readonly string[],
  dropped: readonly string[],
): string {
  return [
    '[the goal is not finished: this finish narrows the objective]',
    `The objective stays what the user wrote: ${clip(objective, 2_000)}`,
    `Its parts, as you named them at your first finish: ${first.join('; ')}`,
    `This finish leaves out: ${dropped.join('; ')}`,
    'Do every part, then call finish again naming all of them in objective_parts (or finish with status "blocked" and say what is missing).',
  ].join('\n');
}
