/** How the CLI prints: one place for human lines, JSON, and errors. */

import type { GoalSnapshot } from '../core/goal-snapshot';
import { type Liveness, STUCK_TEXT } from '../core/liveness';
import { budgetLine } from '../core/spend-cap';
import { plural, terminalSafe } from '../core/text';
import { checkLines } from '../core/verify';

/**
 * Prints a line for a person (stdout). Lines carry model and tool text: control characters in them
 * are shown, never acted on (terminal-text.ts).
 */
export function say(line: string): void {
  process.stdout.write(`${terminalSafe(line)}\n`);
}

/** Prints a notice that is not the command's result (stderr), so `--json` output stays parseable. */
export function notice(line: string): void {
  process.stderr.write(`goalrun: ${terminalSafe(line)}\n`);
}

/** Set once this process hosts a worker: a reader that goes away must not take its goal down too. */
let hostingWorker = false;

/** Marks this process as hosting a worker (cli/context.ts), for main.ts's handling of a closed stdout. */
export function markHostingWorker(): void {
  hostingWorker = true;
}

/** Whether this process hosts a worker. */
export function isHostingWorker(): boolean {
  return hostingWorker;
}

/** Prints a value as JSON on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Formats milliseconds as `1h 2m 3s` / `4.5 s`. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}h ${m}m ${s}s` : `${m}m ${s}s`;
}

/** What formatSnapshot shows: a snapshot, with what only the store or Temporal knows. */
export type SnapshotLike = Omit<GoalSnapshot, 'status'> & {
  status: string;
  /** The short id every command prints and takes (cli/short-ids.ts). */
  shortId?: string;
  keptProgress?: string | null;
  retrying?: { activity: string; attempt: number; lastFailure: string } | null;
  modelNote?: string | null;
  taskQueue?: string;
  /** More labelled lines after the queue (the workspace context: rules, MCP servers, hooks). */
  extraLines?: string[];
  liveness?: Liveness;
  shown?: 'live' | 'last recorded state';
};

/** The words a stalled model stream fails with (activities/providers/stream-idle.ts STALLED_PREFIX). */
const STALLED_PREFIX = 'provider stream stalled';

/** Whether a failure message is a stalled provider stream's. */
export function isStalledFailure(message: string | null | undefined): boolean {
  return message?.includes(STALLED_PREFIX) ?? false;
}

/** What `status` and the live line say while a stalled stream is retried. */
export function stalledText(attempt: number): string {
  return `${STALLED_PREFIX}, retrying (attempt ${attempt})`;
}

/** `since 12:01:02 (3m 4s ago)` for an ISO time. */
export function sinceText(iso: string, now = Date.now()): string {
  const at = new Date(iso);
  return `since ${at.toISOString().slice(11, 19)} UTC (${formatDuration(Math.max(0, now - at.getTime()))} ago)`;
}

/**
 * A running goal's status as its liveness shows it: stuck on an incompatible build, waiting for a
 * worker (since when), stalled; else the status itself.
 */
export function livenessStatus(status: string, liveness: Liveness | undefined): string {
  if (!liveness) return status;
  if (liveness.stuck) return `${STUCK_TEXT}: ${liveness.stuck}`;
  if (liveness.waitingForWorkerSince)
    return `waiting for a worker ${sinceText(liveness.waitingForWorkerSince)}`;
  // The workflow's own watch may have said so already (status stalled).
  if (liveness.stalled) return status === 'stalled' ? status : `stalled (${status})`;
  return status;
}

/** The multi-line human view of a goal's status. */
export function formatSnapshot(snapshot: SnapshotLike): string {
  const status = snapshot.status === 'waiting_for_worker' ? 'waiting for a worker' : snapshot.status;
  const lines = [
    ...(snapshot.shortId ? [`id         ${snapshot.shortId}`] : []),
    `session    ${snapshot.sessionId}`,
    `workflow   ${snapshot.workflowId}`,
    `status     ${livenessStatus(status, snapshot.liveness)}${snapshot.reason ? ` (${snapshot.reason})` : ''}`,
    `objective  ${snapshot.objective}`,
    `model      ${snapshot.model}`,
  ];
  if (snapshot.name) lines.push(`name       ${snapshot.name}`);
  if (snapshot.modelNote) lines.push(`note       ${snapshot.modelNote}`);
  // A goal without a sandbox must never go unnoticed.
  if (snapshot.sandbox === 'off')
    lines.push("sandbox    OFF: tool commands run with the worker's own rights");
  else if (snapshot.sandbox === 'read-only') lines.push('sandbox    read-only');
  if (snapshot.approval) lines.push(approvalPrompt(snapshot.sessionId, snapshot.approval));
  if (snapshot.runningJobs)
    lines.push(
      `jobs       ${plural(snapshot.runningJobs, 'background job')} running (goalrun jobs ${snapshot.sessionId})`,
    );
  lines.push(
    `workspace  ${snapshot.workspace}`,
    `progress   iteration ${snapshot.iteration}, ${plural(snapshot.steps, 'step')}, no-progress ${snapshot.noProgress}, ${formatDuration(snapshot.elapsedMs)}`,
    `usage      context ${plural(snapshot.usage.contextTokens, 'token')}, total ${plural(snapshot.usage.totalTokens, 'token')}, ${plural(snapshot.usage.requests, 'request')}`,
  );
  if (snapshot.budget) lines.push(`budget     ${budgetLine(snapshot.budget)}`);
  if (snapshot.liveness?.stalled) {
    const { since, waitingOn } = snapshot.liveness.stalled;
    lines.push(`stalled    no step finished ${sinceText(since)}; waiting on: ${waitingOn}`);
  }
  if (snapshot.shown === 'last recorded state')
    lines.push("shown      the last recorded state (the goal's workflow did not answer)");
  if (snapshot.taskQueue) lines.push(`queue      ${snapshot.taskQueue}`);
  if (snapshot.extraLines) lines.push(...snapshot.extraLines);
  if (snapshot.lastTool) lines.push(`last tool  ${snapshot.lastTool}`);
  if (snapshot.retrying) {
    const { activity, attempt, lastFailure } = snapshot.retrying;
    lines.push(
      isStalledFailure(lastFailure)
        ? `retrying   ${stalledText(attempt)}; ${lastFailure}`
        : `retrying   ${activity}, attempt ${attempt}, after: ${lastFailure}`,
    );
  }
  if (snapshot.finishSummary) lines.push(`summary    ${snapshot.finishSummary}`);
  // Beside the claim, the parts of the objective it names (the objective as written is above).
  if (snapshot.claimedParts?.length) lines.push(`claims     ${snapshot.claimedParts.join('; ')}`);
  lines.push(...verificationLines(snapshot));
  if (snapshot.recent.length > 0) {
    lines.push(
      `recent:\n${indent(
        snapshot.recent
          .slice(-6)
          .map((action) => action.text)
          .join('\n'),
      )}`,
    );
  }
  if (snapshot.keptProgress) lines.push(`kept progress:\n${indent(snapshot.keptProgress)}`);
  return lines.join('\n');
}

/** What an escalation waits for, why, and how to answer it (status and watch). */
export function approvalPrompt(
  sessionId: string,
  approval: { command: string; justification: string },
): string {
  return [
    `approval   waiting: ${approval.command}`,
    `           because: ${approval.justification}`,
    `           answer:  goalrun approve ${sessionId}  |  goalrun deny ${sessionId} --reason "…"`,
  ].join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

/** Whether a goal's completion was checked, and how each check of its last finish ended. */
function verificationLines(snapshot: Pick<SnapshotLike, 'status' | 'verified' | 'checks'>): string[] {
  const checks = snapshot.checks ?? [];
  const lines: string[] = [];
  if (snapshot.status === 'completed') {
    lines.push(
      `verified   ${snapshot.verified ? 'yes: every check passed' : 'no: no check ran (declare them with --verify)'}`,
    );
  }
  if (checks.length > 0) lines.push(`checks:\n${indent(checkLines(checks).join('\n'))}`);
  return lines;
}
