/** The Markdown of a goal that the Temporal Web UI shows as the workflow's current details. */

import { goalHeadline } from './goal-headline';
import type { GoalSnapshot } from './goal-snapshot';
import { budgetLine } from './spend-cap';
import { renderTasksMarkdown } from './task-graph-render';
import type { TaskView } from './task-graph-types';
import { escapeUiMarkdown } from './ui-markdown';

/**
 * The Markdown the Web UI shows as the workflow's current details: the headline (`status — reason —
 * next command`), then the facts as a list (the UI's renderer joins plain lines into one paragraph),
 * the most important first because the UI's panel has a fixed height; then the task list and the
 * recent actions. Dollars are escaped: the UI's Markdown reads `$…$` as math.
 */
export function detailsMarkdown(
  snapshot: GoalSnapshot,
  tasks: TaskView[] = [],
  contextLine?: string,
): string {
  const facts = [
    ...(snapshot.approval
      ? [
          `**Waiting for approval:** \`${snapshot.approval.command}\` — ${snapshot.approval.justification} (answer with \`goalrun approve ${snapshot.sessionId}\` or \`goalrun deny ${snapshot.sessionId}\`)`,
        ]
      : []),
    ...verificationFacts(snapshot),
    `**Iteration:** ${snapshot.iteration} · **steps:** ${snapshot.steps} · **no progress:** ${snapshot.noProgress}`,
    ...(contextLine ? [`**Context:** ${contextLine}`] : []),
    ...(snapshot.budget ? [`**Budget:** ${budgetLine(snapshot.budget)}`] : []),
    `**Last tool:** ${snapshot.lastTool ? `\`${snapshot.lastTool}\`` : '—'}`,
    `**Usage:** total ${snapshot.usage.totalTokens} tokens over ${snapshot.usage.requests} requests · largest request ${snapshot.usage.contextTokens} tokens`,
    `**Session:** \`${snapshot.sessionId}\`${snapshot.name ? ` (${snapshot.name})` : ''} · **model:** \`${snapshot.model}\`${snapshot.sandbox === 'off' ? ' · **sandbox: off**' : ''}`,
  ];
  // The headline is a paragraph of its own: the blank line keeps the list below from joining it.
  const lines = [goalHeadline(snapshot), '', ...facts.map((fact) => `- ${fact}`)];
  if (tasks.length > 0) lines.push('', renderTasksMarkdown(tasks));
  if (snapshot.recent.length > 0) {
    lines.push('', '**Recent:**', '', ...snapshot.recent.slice(-8).map((action) => `- ${action.text}`));
  }
  return escapeUiMarkdown(lines.join('\n'));
}

/** Whether the completion was checked, and the checks of the last finish (issue 27 §1). */
function verificationFacts(snapshot: GoalSnapshot): string[] {
  const checks = snapshot.checks ?? [];
  const facts: string[] = [];
  if (snapshot.status === 'completed')
    facts.push(`**Verified:** ${snapshot.verified ? 'yes' : 'no (no check ran)'}`);
  if (checks.length > 0) {
    facts.push(
      `**Checks:** ${checks
        .map(
          (check) =>
            `\`${check.command}\` ${check.ok ? 'passed' : `failed (${check.problem ?? `exit ${check.exitCode}`})`}`,
        )
        .join(' · ')}`,
    );
  }
  return facts;
}
