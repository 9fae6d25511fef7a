/**
 * `run` and `start`: commands that start a new goal (or, with --name, continue the project's stopped
 * session of that name, as `resume` does).
 */

import { workspaceCardsNote } from '../../activities/models/card-names';
import { ConfigError } from '../../core/errors';
import type { GoalDefinition } from '../../core/goal';
import type { HeldSessionLock } from '../../store/operation-lock';
import { newSessionId } from '../../store/session-id';
import { projectConfigLines } from '../../worker/project-config';
import { workflowIdOf } from '../../workflows/definitions';
import type { CliContext } from '../context';
import { followGoal } from '../follow';
import { followOptions } from '../follow-options';
import { goalFromOptions } from '../goal-definition';
import type { GoalOptions } from '../goal-options';
import { modelNoteOf } from '../goal-status';
import { placeInWorktree, startingInWorktree } from '../goal-worktree';
import { type ImageFile, readImageFiles, withStoredImages } from '../image-input';
import { writableFile, writeLastMessage } from '../last-message';
import { claimNamedSession } from '../named-start';
import { objectiveFrom } from '../objective-input';
import { notice, say } from '../output';
import { requireSandboxForGoal } from '../sandbox-check';
import { shortIdFor } from '../short-ids';
import { onInterrupt } from '../signals';
import { reportStarted, startGoal } from '../start-goal';
import { webUiUrl } from '../web-ui';
import { hasLiveToolHost, noToolHostMessage } from '../worker-presence';
import { resumeSession } from './resume-command';

/** `goalrun run`: start a goal, host a worker unless --no-worker, follow it to the end. */
export async function runCommand(
  context: CliContext,
  objectiveArg: string,
  options: GoalOptions & { name?: string },
): Promise<number> {
  const interrupted = onInterrupt();
  const hostsWorker = options.worker !== false;
  const objective = objectiveFrom(objectiveArg);
  // Checked before the goal starts: a typo in the path must not cost a whole run.
  const lastMessageFile = options.outputLastMessage ? writableFile(options.outputLastMessage) : undefined;
  const sessionId = newSessionId(options.workspace ?? process.cwd(), new Date());
  const goal = goalFromOptions(objective, options, context.settings, sessionId, hostsWorker);
  const images = readImageFiles(options.image, goal.model, context.settings.home);
  sayProjectSettings(context, goal.workspace);
  // Before a name is claimed: a machine that cannot sandbox the goal starts nothing.
  await requireSandboxForGoal(goal);
  if (options.name !== undefined) {
    const claim = await claimNamedSession(context, options.name, objective, options, hostsWorker);
    try {
      if (claim.kind === 'continue') {
        refuseImagesOnContinue(images, options.name);
        return await resumeSession(
          context,
          claim.sessionId,
          { ...options, message: objective },
          interrupted,
          claim.lock,
        );
      }
      const placed = await placeInWorktree(context, claim.goal, options, options.name);
      return await runGoal(context, placed, options, interrupted, claim.lock, lastMessageFile, images);
    } finally {
      await claim.lock.release();
    }
  }
  const placed = await placeInWorktree(context, goal, options);
  return runGoal(context, placed, options, interrupted, undefined, lastMessageFile, images);
}

/** Starts a new goal with a worker here (unless --no-worker) and follows it. */
async function runGoal(
  context: CliContext,
  goal: GoalDefinition,
  options: GoalOptions,
  interrupted: Promise<NodeJS.Signals>,
  lock?: HeldSessionLock,
  lastMessageFile?: string,
  images: readonly ImageFile[] = [],
): Promise<number> {
  const hostsWorker = options.worker !== false;
  const follow = await followOptions(context, goal.sessionId, options, interrupted, 'start');
  if (hostsWorker) await context.hostWorker();
  const withImages = await withStoredImages(() => context.sessionStore(), goal, images);
  const started = await startingInWorktree(goal, () => startGoal(context, withImages));
  await lock?.release();
  if (!follow.json) await announce(started.sessionId, context, goal.model, goal.workspace);
  noteModel(goal.model, { home: context.settings.home, workspace: goal.workspace });
  await warnIfNoToolHost(context, goal);
  const code = await followGoal(context, started.sessionId, follow);
  if (lastMessageFile) await writeLastMessage(context, started.sessionId, lastMessageFile);
  return code;
}

/** `goalrun start`: start a goal and return at once. */
export async function startCommand(
  context: CliContext,
  objectiveArg: string,
  options: GoalOptions & { name?: string },
): Promise<number> {
  const objective = objectiveFrom(objectiveArg);
  const sessionId = newSessionId(options.workspace ?? process.cwd(), new Date());
  const goal = goalFromOptions(objective, options, context.settings, sessionId, false);
  const images = readImageFiles(options.image, goal.model, context.settings.home);
  sayProjectSettings(context, goal.workspace);
  await requireSandboxForGoal(goal);
  if (options.name !== undefined) {
    const claim = await claimNamedSession(context, options.name, objective, options, false);
    try {
      if (claim.kind === 'continue') {
        refuseImagesOnContinue(images, options.name);
        const resumeOptions = { ...options, message: objective, worker: false };
        return await resumeSession(context, claim.sessionId, resumeOptions, onInterrupt(), claim.lock, false);
      }
      const placed = await placeInWorktree(context, claim.goal, options, options.name);
      const withImages = await withStoredImages(() => context.sessionStore(), placed, images);
      const started = await startingInWorktree(placed, () => startGoal(context, withImages));
      await claim.lock.release();
      await reportStarted(context, started, options.json);
      return 0;
    } finally {
      await claim.lock.release();
    }
  }
  const placed = await placeInWorktree(context, goal, options);
  const withImages = await withStoredImages(() => context.sessionStore(), placed, images);
  const started = await startingInWorktree(placed, () => startGoal(context, withImages));
  await reportStarted(context, started, options.json);
  noteModel(placed.model, { home: context.settings.home, workspace: placed.workspace });
  await warnIfNoToolHost(context, placed);
  return 0;
}

/** `--image` goes to a new goal's first message: a named session that goes on has had its own. */
function refuseImagesOnContinue(images: readonly ImageFile[], name: string): void {
  if (images.length > 0) {
    throw new ConfigError(
      `--image attaches images to a new goal's first message, and the session named "${name}" goes on instead; give the goal another name`,
    );
  }
}

/**
 * Says, before the goal starts, what the workspace's `.goalrun/config.json` applied and asked for in
 * vain, and that its `.goalrun/cards` are not read (issue 24 §3): a file the model may have written
 * changes nothing unseen.
 */
function sayProjectSettings(context: CliContext, workspace: string): void {
  for (const line of projectConfigLines(context.settings.project)) notice(line);
  const cards = workspaceCardsNote(workspace);
  if (cards) notice(cards);
}

/** Says once, at start, that the model has no card (and what that means), if so. */
function noteModel(model: string, where: { home: string; workspace: string }): void {
  const note = modelNoteOf(model, where);
  if (note) notice(note);
}

/** A goal whose tools go to a tool host that nobody runs would wait at its first tool call, silently. */
async function warnIfNoToolHost(context: CliContext, goal: GoalDefinition): Promise<void> {
  if (!goal.toolTaskQueue) return;
  const client = await context.temporal();
  if ((await hasLiveToolHost(client, goal.toolTaskQueue)) === false) {
    notice(noToolHostMessage(goal.toolTaskQueue, goal.workspace));
  }
}

/** What `run` prints before it follows a new goal: its short id and id, model, workspace and Web UI link. */
async function announce(
  sessionId: string,
  context: CliContext,
  model: string,
  workspace: string,
): Promise<void> {
  const ui = webUiUrl(context.settings, workflowIdOf(sessionId));
  say(`goal ${await shortIdFor(context, sessionId)} (session ${sessionId})`);
  say(`  model ${model} · workspace ${workspace}`);
  if (ui) say(`  Web UI ${ui}`);
  say('  Ctrl-C stops following; the goal keeps its state and can be resumed.');
}
