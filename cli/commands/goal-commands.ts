/** `run`, `start` and `resume`: commands that start a goal execution. */

import { ConfigError } from '../../core/errors';
import { newSessionId } from '../../store/session-id';
import { sessionIdOf, workflowIdOf } from '../../workflows/definitions';
import type { CliContext } from '../context';
import { followGoal } from '../follow';
import { type GoalOptions, goalFromOptions, limitsFromFlags } from '../goal-options';
import { snapshotFromRow, workflowStatus } from '../goal-status';
import { notice, printJson, say } from '../output';
import { startGoal } from '../start-goal';

/** Resolves on the first Ctrl-C (SIGINT) or SIGTERM; a second one exits at once. */
export function onInterrupt(): Promise<void> {
  return new Promise((resolve) => {
    let seen = false;
    const handler = () => {
      if (seen) process.exit(130);
      seen = true;
      resolve();
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  });
}

/** `goalrun run`: start a goal, host a worker unless --no-worker, follow it to the end. */
export async function runCommand(
  context: CliContext,
  objective: string,
  options: GoalOptions,
): Promise<number> {
  const hostsWorker = options.worker !== false;
  const sessionId = newSessionId(options.workspace ?? process.cwd(), new Date());
  const goal = goalFromOptions(objective, options, context.settings, sessionId, hostsWorker);
  if (hostsWorker) await context.hostWorker();
  const started = await startGoal(context, goal);
  if (!options.json) announce(started.sessionId, context, goal.model, goal.workspace);
  return followGoal(context, started.sessionId, { json: options.json, interrupted: onInterrupt() });
}

/** `goalrun start`: start a goal and return at once. */
export async function startCommand(
  context: CliContext,
  objective: string,
  options: GoalOptions,
): Promise<number> {
  const sessionId = newSessionId(options.workspace ?? process.cwd(), new Date());
  const goal = goalFromOptions(objective, options, context.settings, sessionId, false);
  const started = await startGoal(context, goal);
  if (options.json) {
    printJson(started);
  } else {
    say(`started goal ${started.sessionId} (workflow ${started.workflowId})`);
    say(`  a worker must be running:  goalrun worker`);
    say(`  follow it:                 goalrun watch ${started.sessionId}`);
  }
  return 0;
}

/**
 * `goalrun resume`: attach to a running goal, or start a new execution of a stopped one from its
 * checkpoint, with counters and the structured history carried over.
 */
export async function resumeCommand(context: CliContext, id: string, options: GoalOptions): Promise<number> {
  const sessionId = sessionIdOf(id.trim());
  const client = await context.temporal();
  const hostsWorker = options.worker !== false;
  const status = await workflowStatus(client, sessionId);
  if (status === 'RUNNING') {
    if (!options.json) say(`goal ${sessionId} is still running; attaching to it`);
    if (hostsWorker) await context.hostWorker();
    return followGoal(context, sessionId, { json: options.json, interrupted: onInterrupt() });
  }
  const store = await context.sessionStore();
  const row = await store.findSession(id.trim());
  const saved = row ? snapshotFromRow(row) : null;
  if (!row || !saved) throw new ConfigError(`no saved goal with session or workflow id "${id}" to resume`);
  if (saved.status === 'completed') {
    notice(`goal ${row.id} already completed; starting another execution of it anyway`);
  }
  const goal = (row.goalState as { goal: import('../../core/goal').GoalDefinition }).goal;
  if (hostsWorker) {
    // The same checks as `run`: this process will make the model calls.
    goalFromOptions(
      goal.objective,
      { workspace: goal.workspace, model: goal.model, baseUrl: goal.baseUrl },
      context.settings,
      row.id,
      true,
    );
    await context.hostWorker();
  }
  const limitsOverride = limitsFromFlags(options);
  await startGoal(context, goal, { resume: true, limitsOverride });
  if (!options.json) {
    say(
      `resuming goal ${row.id} from step ${saved.steps}, iteration ${saved.iteration} (was ${saved.status})`,
    );
  }
  return followGoal(context, row.id, { json: options.json, interrupted: onInterrupt() });
}

function announce(sessionId: string, context: CliContext, model: string, workspace: string): void {
  const ui = webUiUrl(context, workflowIdOf(sessionId));
  say(`goal ${sessionId}`);
  say(`  model ${model} · workspace ${workspace}`);
  if (ui) say(`  Web UI ${ui}`);
  say('  Ctrl-C stops following; the goal keeps its state and can be resumed.');
}

/** The Web UI address of a workflow, when Temporal runs locally on the default ports. */
export function webUiUrl(context: CliContext, workflowId: string): string | null {
  const [host, port] = context.settings.temporalAddress.split(':');
  if (!['localhost', '127.0.0.1'].includes(host ?? '')) return null;
  const uiPort = port === '7233' || port === undefined ? 8233 : Number(port) + 1000;
  return `http://localhost:${uiPort}/namespaces/${context.settings.namespace}/workflows/${workflowId}`;
}
