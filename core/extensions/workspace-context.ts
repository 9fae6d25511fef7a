/**
 * What the tool host knows about a goal's workspace, gathered once per execution (at the start, after
 * a resume, in the fresh session of /clear): the environment snapshot, the project instructions in
 * effect, the MCP servers' tools and the hooks. Stored in the session store under (session,
 * execution); the workflow carries only the small summary, and the model step reads the rest.
 */
import { clip } from '../text';

/** When a server's calls wait for `goalrun approve`: never, for tools not marked read-only, or always. */
export const MCP_APPROVAL_POLICIES = ['never', 'on-request', 'always'] as const;

/** A server's approval policy (config `mcp_servers.NAME.approval`). */
export type McpApproval = (typeof MCP_APPROVAL_POLICIES)[number];

/** One MCP tool as the model is offered it. */
export interface McpToolEntry {
  /** `mcp__<server>__<tool>`. */
  name: string;
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The server marks the tool read-only (`annotations.readOnlyHint`). */
  readOnly: boolean;
}

/** One configured MCP server and how listing its tools went. */
export interface McpServerEntry {
  name: string;
  transport: 'stdio' | 'http';
  approval: McpApproval;
  /** Where it was configured. */
  source: 'config' | 'mcp-config' | 'project';
  ok: boolean;
  /** Tools offered to the model. */
  tools: number;
  /** Why it failed, or which tools were left out. */
  problem?: string;
}

/** Hook counts per event (the commands stay on the tool host). */
export interface HookCounts {
  pre_tool: number;
  post_tool: number;
  stop: number;
  notify: number;
}

/** Where the tool host reads the goal's MCP servers and hooks from: references, never values. */
export interface ExtensionSources {
  /** `--mcp-config FILE`, an absolute path on the tool host. */
  mcpConfigFile?: string;
  /** Use the workspace's `.mcp.json` and `.goalrun/hooks.json` (`--trust-project`). */
  trustProject?: boolean;
  /**
   * The execution at which the user trusted the project's files as they are now (`resume
   * --trust-project`): its gathering pins them afresh. Absent: the goal's first gathering pins them.
   */
  trustedExecution?: number;
  /** The session whose pins a fresh session of /clear goes on with (it trusted nothing new). */
  pinnedFrom?: string;
}

/** The workspace files that may bring hooks or MCP servers (issue 24 §3). */
export type WorkspaceExtensionKind = 'project-hooks' | 'project-mcp' | 'workspace-mcp-config';

/**
 * One of the workspace's own extension files as the user trusted it: at the goal's start, or at a
 * `resume --trust-project`. A later gathering that finds other content uses this one, and says so.
 */
export interface PinnedWorkspaceFile {
  /** `.goalrun/hooks.json`, `.mcp.json`, or an `--mcp-config` file's path. */
  file: string;
  kind: WorkspaceExtensionKind;
  /** The digest of the file trusted, or null when there was no usable file then. */
  sha256: string | null;
  /** The execution that trusted it. */
  trustedAt: number;
  /** The file as trusted, validated (`{hooks}` or `{mcpServers}`), or null when there was none. */
  content: unknown;
}

/** What a gathering decided about the workspace's own extension files. */
export interface WorkspaceFilesState {
  pins: PinnedWorkspaceFile[];
  /** Files of a project that is not trusted, found and not used: `.goalrun/hooks.json (4 hooks)`. */
  ignored: string[];
}

/** The stored row: everything the tool host gathered for one execution. */
export interface WorkspaceContextData {
  execution: number;
  /** ISO time the tool host gathered it. */
  gatheredAt: string;
  environment: { workingDirectory: string; os: string; date: string; git: string };
  instructions: {
    text: string;
    files: Array<{ label: string; bytes: number; shownBytes: number }>;
    capBytes: number;
    /** A digest of the text, to tell a resume that the files changed. */
    digest: string;
  };
  mcp: { servers: McpServerEntry[]; tools: McpToolEntry[] };
  hooks: HookCounts;
  sources: ExtensionSources;
  /**
   * The workspace's own hooks and MCP files, pinned for this execution: the tool host runs these, and
   * never reads the files again until the next gathering. Absent in rows of older workers: then no
   * workspace file brings a hook or a server.
   */
  workspaceFiles?: WorkspaceFilesState;
  /** Notices for the user (cap applied, a server that failed, instructions that changed). */
  notices: string[];
}

/** What the gathering activity returns to the workflow: small, no text of any file. */
export interface WorkspaceContextSummary {
  execution: number;
  instructionFiles: number;
  servers: number;
  tools: number;
  stopHooks: number;
  notifyHooks: number;
  /** The notices, each clipped (also stored as notice events). */
  notices: string[];
  /** Whether `git status` found a repository (false: no workspace snapshots this execution). */
  gitRepository?: boolean;
  /**
   * Whether the tool host holds anything of the session once gathered (a private /tmp, a job, a
   * server) that the goal's end must remove. Absent from older tool hosts: then it may.
   */
  leftOnHost?: boolean;
}

/** What `git status` says in the environment snapshot when the workspace is no repository. */
export const NOT_A_GIT_REPOSITORY = 'not a git repository';

/** The part of the summary the workflow keeps in its state. */
export type WorkspaceContextCounts = Omit<
  WorkspaceContextSummary,
  'notices' | 'gitRepository' | 'leftOnHost'
>;

/** The summary of a stored row. */
export function summaryOf(data: WorkspaceContextData): WorkspaceContextSummary {
  return {
    execution: data.execution,
    instructionFiles: data.instructions.files.filter((file) => file.shownBytes > 0).length,
    servers: data.mcp.servers.length,
    tools: data.mcp.tools.length,
    stopHooks: data.hooks.stop,
    notifyHooks: data.hooks.notify,
    notices: data.notices.map((text) => clip(text, 300)),
    gitRepository: data.environment.git !== NOT_A_GIT_REPOSITORY,
  };
}

/** The first message's environment lines, from the snapshot the tool host took. */
export function environmentLines(environment: WorkspaceContextData['environment']): string {
  return [
    'Environment:',
    `- working directory: ${environment.workingDirectory}`,
    `- OS: ${environment.os}`,
    `- date: ${environment.date}`,
    `- git: ${environment.git}`,
  ].join('\n');
}

/** Whether a call of this MCP tool waits for a human under its server's policy. */
export function mcpCallNeedsApproval(approval: McpApproval, readOnly: boolean): boolean {
  return approval === 'always' || (approval === 'on-request' && !readOnly);
}
