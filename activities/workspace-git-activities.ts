/**
 * The tool host's activities on the workspace's repository: a step's snapshot, the repository a goal
 * starts in, a sub-agent's worktree. A workspace outside a tools worker's root is refused by each.
 */
import { Context } from '@temporalio/activity';
import { type AgentWorktree, makeAgentWorktree } from './agent-worktree';
import { KEEP_ALIVE_MS } from './keep-alive';
import type { SandboxHost } from './sandbox/host';
import { toolHostRootRefusal } from './tools/tool-host-root';
import {
  type SnapshotInput,
  type SnapshotResult,
  snapshotWorkspace,
  type WorkspaceRepository,
  workspaceRepository,
} from './workspace-snapshot';

/** How often a running snapshot heartbeats (well under a foreground host's heartbeat timeout). */
const SNAPSHOT_HEARTBEAT_MS = KEEP_ALIVE_MS;

/** What the repository activities need from their worker. */
export interface WorkspaceGitDeps {
  host: () => SandboxHost;
  /** A tools worker's workspace root (a real path); absent: any workspace. */
  workspaceRoot?: string;
}

/** Creates the repository activities of a tool host. */
export function createWorkspaceGitActivities(deps: WorkspaceGitDeps) {
  const { host } = deps;
  return {
    /**
     * Records the workspace as the snapshot of a step (workspace-snapshot.ts). A workspace outside a
     * tools worker's root is not touched: the refusal is the reason no snapshot was taken.
     */
    async snapshotWorkspace(input: SnapshotInput): Promise<SnapshotResult> {
      const refusal = deps.workspaceRoot
        ? await toolHostRootRefusal(input.workspace, deps.workspaceRoot)
        : null;
      if (refusal) return { taken: false, reason: refusal };
      // A snapshot of a large work tree can outlast the heartbeat timeout.
      const context = Context.current();
      const beat = setInterval(() => context.heartbeat(), SNAPSHOT_HEARTBEAT_MS);
      try {
        return await snapshotWorkspace(input, host());
      } finally {
        clearInterval(beat);
      }
    },

    /**
     * The repository a goal's workspace is in when it starts (issue 24): its snapshots are of that
     * one only. Files only: no git runs.
     */
    async workspaceRepository(input: { workspace: string }): Promise<WorkspaceRepository> {
      const refusal = deps.workspaceRoot
        ? await toolHostRootRefusal(input.workspace, deps.workspaceRoot)
        : null;
      if (refusal) return { repository: null, refused: refusal };
      return workspaceRepository(input.workspace);
    },

    /**
     * A git worktree of the workspace for a sub-agent (issue 27 §2, isolation "worktree"); a
     * workspace outside a tools worker's root is refused.
     */
    async agentWorktree(input: { workspace: string; sessionId: string }): Promise<AgentWorktree> {
      const refusal = deps.workspaceRoot
        ? await toolHostRootRefusal(input.workspace, deps.workspaceRoot)
        : null;
      if (refusal) return { error: refusal };
      return makeAgentWorktree(input.workspace, input.sessionId, host());
    },
  };
}
