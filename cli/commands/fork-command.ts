/**
 * `goalrun fork <id> [--at-step N]` (issue 17 §3): a new stopped session whose structured history is
 * the parent's up to the end of step N, with the task graph, counters and compaction state saved at
 * that point. In a git workspace the files are rewound too: the step's snapshot
 * (refs/goalrun/<session>/<N>) is checked out into a new detached worktree that the fork uses. The
 * parent is only read, under its session lock; `goalrun resume <fork>` runs the next step.
 */
import path from 'node:path';
import type { RepositoryLayout } from '../../activities/git/repository-layout';
import {
  addSnapshotWorktree,
  findSnapshot,
  removeSnapshotWorktree,
  setSnapshotRef,
} from '../../activities/snapshot-worktree';
import { snapshotRef } from '../../activities/workspace-snapshot';
import { ConfigError } from '../../core/errors';
import {
  endOfStep,
  FORK_ORIGIN_KEY,
  forkReason,
  type SavedState,
  stateAtCut,
  stepsIn,
} from '../../core/fork-point';
import type { GoalDefinition } from '../../core/goal';
import { sessionIdWith, shortIdOf } from '../../core/session-ids';
import { workflowIdOf } from '../../core/workflow-names';
import { lockSession } from '../../store/operation-lock';
import { projectHash } from '../../store/session-id';
import type { CliContext } from '../context';
import { resolveSessionId } from '../goal-id';
import { printJson, say } from '../output';
import { checkSessionName, projectRealPath } from '../session-names';
import { shortIdsFor } from '../short-ids';

/** Options of `goalrun fork`. */
export interface ForkOptions {
  atStep?: string;
  name?: string;
  workspace?: string;
  json?: boolean;
}

/** Where the fork's files are: a worktree at a snapshot, or the parent's workspace (conversation only). */
interface ForkWorkspace {
  workspace: string;
  /** The worktree made for the fork (removed again if the fork cannot be stored). */
  worktree?: string;
  snapshot?: string;
  /** The repository of the snapshot (the parent's, checked). */
  layout?: RepositoryLayout;
  /** Why the files were not rewound. */
  conversationOnly?: string;
}

export async function forkCommand(context: CliContext, id: string, options: ForkOptions): Promise<number> {
  const atStepGiven = options.atStep === undefined ? undefined : Number(options.atStep);
  if (atStepGiven !== undefined && (!Number.isInteger(atStepGiven) || atStepGiven < 1))
    throw new ConfigError(`--at-step must be a step number (1 or more), got "${options.atStep}"`);
  const name = options.name === undefined ? null : checkSessionName(options.name);
  const parentId = await resolveSessionId(context, { id });
  const store = await context.sessionStore();
  const lock = await lockSession(store, parentId, 'fork');
  try {
    const row = await store.getSession(parentId);
    const latest = row?.goalState as (SavedState & { goal?: GoalDefinition }) | null | undefined;
    if (!row || row.cleanedAt || !latest?.goal)
      throw new ConfigError(
        `session ${parentId} has no saved history to fork (it never ran a step, or was cleaned)`,
      );
    const steps = stepsIn(await store.listMessages(parentId));
    if (steps.length === 0) throw new ConfigError(`session ${parentId} has no step to fork from yet`);
    const atStep = atStepGiven ?? steps[steps.length - 1];
    const cutSeq = endOfStep(await store.listMessages(parentId), atStep);
    if (cutSeq === null)
      throw new ConfigError(
        `session ${parentId} has no step ${atStep}; its steps are ${steps[0]}-${steps[steps.length - 1]}`,
      );
    const state = stateAtCut([...(await store.checkpointStates(parentId)), latest], cutSeq);
    if (!state) throw new ConfigError(`session ${parentId} saved no state at or before step ${atStep}`);
    const now = new Date();
    const short = shortIdOf(sessionIdWith('0', now));
    const files = await forkWorkspace(latest.goal.workspace, parentId, atStep, short, options.workspace);
    const sessionId = sessionIdWith(projectHash(projectRealPath(files.workspace)), now);
    const origin = { parentId, atStep };
    const reason = forkReason(origin);
    const goal = { ...latest.goal, ...(state.goal as GoalDefinition), sessionId, workspace: files.workspace };
    delete (goal as { hostQueue?: string }).hostQueue;
    try {
      await store.forkSession({
        parentId,
        cutSeq,
        session: {
          id: sessionId,
          projectDir: projectRealPath(files.workspace),
          projectHash: projectHash(projectRealPath(files.workspace)),
          objective: row.objective,
          model: goal.model,
          workflowId: workflowIdOf(sessionId),
          name,
          status: 'cancelled',
          reason,
        },
        state: {
          ...state,
          goal,
          status: 'cancelled',
          reason,
          // Until it first runs: its resume then says where it starts (resume-command.ts).
          [FORK_ORIGIN_KEY]: origin,
          jobs: [],
          paused: false,
          approval: null,
          runningTool: null,
          // A fork in a worktree of its own records that repository when it resumes, with its own cap.
          snapshots: files.worktree ? undefined : state.snapshots,
        },
      });
      // The fork's own snapshots chain from the step it starts at (and go with it when it is cleaned).
      if (files.snapshot && files.layout)
        await setSnapshotRef(files.layout, snapshotRef(sessionId, atStep), files.snapshot);
    } catch (err) {
      if (files.worktree && files.layout)
        await removeSnapshotWorktree(files.layout, files.worktree).catch(() => undefined);
      if ((err as { code?: string }).code === '23505')
        throw new ConfigError(
          `the name "${name}" is taken by another session of the project ${files.workspace}`,
        );
      throw err;
    }
    const result = {
      sessionId,
      workflowId: workflowIdOf(sessionId),
      workspace: files.workspace,
      forkedFrom: parentId,
      atStep,
    };
    if (options.json) {
      printJson(result);
      return 0;
    }
    const shortIds = await shortIdsFor(store, [parentId, sessionId]);
    const forkShort = shortIds.get(sessionId) ?? sessionId;
    say(
      `forked ${shortIds.get(parentId) ?? parentId} at step ${atStep}: session ${forkShort} (${sessionId})${name ? `, named ${name}` : ''}`,
    );
    say(
      files.conversationOnly
        ? `conversation only: ${files.conversationOnly}`
        : `workspace: ${files.workspace} (the snapshot of step ${atStep})`,
    );
    // The whole id: a fork in a worktree of its own is another project, which resume takes by it alone.
    say(`continue it with: goalrun resume ${sessionId}`);
    return 0;
  } finally {
    await lock.release();
  }
}

/**
 * The fork's files: the snapshot of the step checked out into a new detached worktree (beside the
 * repository, or at --workspace), the fork's workspace being the same folder inside it; without a
 * repository or a snapshot, the parent's workspace, shared (conversation only).
 */
async function forkWorkspace(
  parentWorkspace: string,
  parentId: string,
  atStep: number,
  short: string,
  given: string | undefined,
): Promise<ForkWorkspace> {
  const found = await findSnapshot(parentWorkspace, snapshotRef(parentId, atStep));
  if (found.kind !== 'found') {
    if (given)
      throw new ConfigError(
        `--workspace needs a snapshot to check out, and ${parentWorkspace} has none of step ${atStep}${
          found.kind === 'none' ? ` (${found.why})` : ''
        }`,
      );
    return {
      workspace: parentWorkspace,
      conversationOnly:
        found.kind === 'missing'
          ? `no snapshot of step ${atStep} (the goal ran before snapshots, or it failed); the fork shares ${parentWorkspace}`
          : `${found.why}; the fork shares its files`,
    };
  }
  const { layout, commit: snapshot } = found;
  const top = layout.top;
  const worktree = path.resolve(given ?? `${top}-fork-${short}`);
  try {
    await addSnapshotWorktree(layout, snapshot, worktree);
  } catch (err) {
    throw new ConfigError(
      `could not make the worktree ${worktree}: ${String((err as Error).message ?? err).trim()}`,
    );
  }
  const inside = path.relative(projectRealPath(top), projectRealPath(parentWorkspace));
  return { workspace: path.join(worktree, inside), worktree, snapshot, layout };
}
