/**
 * `run --name` / `start --name`: get or create a session by name within the project (issue 17,
 * F-SESSION). The name is claimed by inserting the session row under a unique index, with the
 * session's operation lock taken in the same transaction, so of two racing starts one creates the
 * session and the other finds it (and, once the first has started it, finds it running).
 */
import { ConfigError } from '../core/errors';
import type { GoalDefinition } from '../core/goal';
import { workflowIdOf } from '../core/workflow-names';
import {
  type HeldSessionLock,
  heldLock,
  lockHolderName,
  lockSession,
  SESSION_LOCK_TTL_MS,
} from '../store/operation-lock';
import { newSessionId, projectHash } from '../store/session-id';
import type { CliContext } from './context';
import { goalFromOptions } from './goal-definition';
import type { GoalOptions } from './goal-options';
import { resolveWorkspace } from './goal-options';
import { workflowStatus } from './goal-status';
import { checkSessionName, projectRealPath } from './session-names';

/** What a named start does: start a new session, or continue the stopped one of that name. */
export type NamedStart =
  | { kind: 'new'; goal: GoalDefinition; lock: HeldSessionLock }
  | { kind: 'continue'; sessionId: string; lock: HeldSessionLock };

/** Gets or creates the project's session of this name; refuses (exit 2) when it is running. */
export async function claimNamedSession(
  context: CliContext,
  rawName: string,
  objective: string,
  options: GoalOptions,
  hostsWorker: boolean,
): Promise<NamedStart> {
  const name = checkSessionName(rawName);
  const workspace = resolveWorkspace(options.workspace, options.toolsQueue !== undefined);
  const sessionId = newSessionId(workspace, new Date());
  // Checked before the name is claimed: a bad flag must not leave a named session behind.
  const goal = goalFromOptions(objective, options, context.settings, sessionId, hostsWorker);
  const realPath = projectRealPath(workspace);
  const store = await context.sessionStore();
  const holder = lockHolderName();
  const claim = await store.claimSessionName(
    {
      id: sessionId,
      projectDir: realPath,
      projectHash: projectHash(realPath),
      objective: goal.objective,
      model: goal.model,
      workflowId: workflowIdOf(sessionId),
      name,
    },
    { operation: 'start', holder, ttlMs: SESSION_LOCK_TTL_MS },
  );
  if (claim.created) return { kind: 'new', goal, lock: heldLock(store, sessionId, holder) };
  const existing = claim.session;
  const lock = await lockSession(store, existing.id, 'start');
  try {
    const client = await context.temporal();
    const status = await workflowStatus(client, existing.id);
    if (status === 'RUNNING') {
      throw new ConfigError(`session ${name} is running (goal ${existing.id}); steer it, or cancel it first`);
    }
    if (status === null && existing.goalState === null) {
      // Claimed by a start that died before it started the workflow: start it now, under its id.
      const fresh = goalFromOptions(objective, options, context.settings, existing.id, hostsWorker);
      return { kind: 'new', goal: fresh, lock };
    }
    return { kind: 'continue', sessionId: existing.id, lock };
  } catch (err) {
    await lock.release();
    throw err;
  }
}
