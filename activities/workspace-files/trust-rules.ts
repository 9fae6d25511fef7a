/**
 * What goalrun reads of a workspace on the host, and how far it trusts each file. The workspace
 * belongs to the model (and to whoever wrote the repository): every file in it is hostile input to
 * the host. docs/security.md shows this list as its trust table; test/workspace-files checks that the
 * two agree and that every row names a test that exists.
 */

/** The kinds of workspace file the host reads. */
export const WORKSPACE_FILE_KINDS = [
  'instructions',
  'project-config',
  'project-hooks',
  'project-mcp',
  'workspace-mcp-config',
] as const;

/** One kind of workspace file. */
export type WorkspaceFileKind = (typeof WORKSPACE_FILE_KINDS)[number];

/** How goalrun treats one kind of workspace file. */
export interface WorkspaceFileRule {
  /** How the notes name the file. */
  file: string;
  /** How the trust table of docs/security.md starts its row (a backquoted name). */
  docKey: string;
  /** Most bytes read: longer instruction files are cut, longer config files are refused. */
  maxBytes: number;
  /** What a file over `maxBytes` gets. */
  overCap: 'cut' | 'refuse';
}

const KIB = 1024;

/** The rules by kind. */
export const WORKSPACE_FILE_RULES: Record<WorkspaceFileKind, WorkspaceFileRule> = {
  instructions: { file: 'AGENTS.md / CLAUDE.md', docKey: 'AGENTS.md', maxBytes: 256 * KIB, overCap: 'cut' },
  'project-config': {
    file: '.goalrun/config.json',
    docKey: '.goalrun/config.json',
    maxBytes: 64 * KIB,
    overCap: 'refuse',
  },
  'project-hooks': {
    file: '.goalrun/hooks.json',
    docKey: '.goalrun/hooks.json',
    maxBytes: 64 * KIB,
    overCap: 'refuse',
  },
  'project-mcp': { file: '.mcp.json', docKey: '.mcp.json', maxBytes: 256 * KIB, overCap: 'refuse' },
  'workspace-mcp-config': {
    file: '--mcp-config FILE in the workspace or a writable root',
    docKey: '--mcp-config FILE',
    maxBytes: 256 * KIB,
    overCap: 'refuse',
  },
};

/** What a note says a refused workspace file could have been: the reason links are never followed. */
export const LINK_REFUSAL =
  'goalrun follows no symbolic link in the workspace when it reads a file for itself (it could lead out of the workspace)';
