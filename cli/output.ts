/** How the CLI prints: one place for human lines, JSON, and errors. */
import type { GoalSnapshot } from '../core/goal';

/** Prints a line for a person (stdout). */
export function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Prints a notice that is not the command's result (stderr), so `--json` output stays parseable. */
export function notice(line: string): void {
  process.stderr.write(`goalrun: ${line}\n`);
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

/** The multi-line human view of a goal's status. */
export function formatSnapshot(
  snapshot: GoalSnapshot & {
    keptProgress?: string | null;
    retrying?: { activity: string; attempt: number; lastFailure: string } | null;
  },
): string {
  const lines = [
    `session    ${snapshot.sessionId}`,
    `workflow   ${snapshot.workflowId}`,
    `status     ${snapshot.status}${snapshot.reason ? ` (${snapshot.reason})` : ''}`,
    `objective  ${snapshot.objective}`,
    `model      ${snapshot.model}`,
    `workspace  ${snapshot.workspace}`,
    `progress   iteration ${snapshot.iteration}, ${snapshot.steps} steps, no-progress ${snapshot.noProgress}, ${formatDuration(snapshot.elapsedMs)}`,
    `usage      context ${snapshot.usage.contextTokens} tokens, total ${snapshot.usage.totalTokens} tokens, ${snapshot.usage.requests} requests`,
  ];
  if (snapshot.lastTool) lines.push(`last tool  ${snapshot.lastTool}`);
  if (snapshot.retrying) {
    const { activity, attempt, lastFailure } = snapshot.retrying;
    lines.push(`retrying   ${activity}, attempt ${attempt}, after: ${lastFailure}`);
  }
  if (snapshot.finishSummary) lines.push(`summary    ${snapshot.finishSummary}`);
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

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
