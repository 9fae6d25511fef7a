/**
 * A sub-agent's own git worktree (issue 27 §2, `agent` with isolation "worktree"): the committed HEAD
 * of the parent's workspace checked out, detached, beside the repository at
 * `<repository>.goalrun-agents/<child session>`, by the safe rule of snapshot-worktree.ts (pointer
 * files checked, git sandboxed, no hook runs). Idempotent: a retry finds the worktree it made.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { SandboxHost } from './sandbox/host';
import { addSnapshotWorktree, findSnapshot } from './snapshot-worktree';

/** The worktree made, or why none could be. */
export type AgentWorktree = { worktree: string } | { error: string };

/** Where a child's worktree goes, beside the repository's top directory. */
export function agentWorktreePath(top: string, childSessionId: string): string {
  return path.join(`${top}.goalrun-agents`, childSessionId);
}

/** Checks the workspace's HEAD out into a new detached worktree for the child session. */
export async function makeAgentWorktree(
  workspace: string,
  childSessionId: string,
  host?: SandboxHost,
): Promise<AgentWorktree> {
  const found = await findSnapshot(workspace, 'HEAD', host);
  if (found.kind === 'none') return { error: found.why };
  if (found.kind === 'missing') return { error: `${workspace} has no commit to check out` };
  const worktree = agentWorktreePath(found.layout.top, childSessionId);
  // A retry after the worktree was made: it is there, with its pointer file.
  if (existsSync(path.join(worktree, '.git'))) return { worktree };
  try {
    await addSnapshotWorktree(found.layout, found.commit, worktree, host);
  } catch (err) {
    return { error: `could not make a worktree: ${(err as Error).message}` };
  }
  // The workspace may be a folder inside the repository: the child works on the same folder there.
  const inside = path.relative(found.layout.top, workspace);
  return { worktree: inside ? path.join(worktree, inside) : worktree };
}
