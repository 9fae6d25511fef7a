/**
 * The workspace's own hooks and MCP servers (issue 24 §3, issue 26 §7). A trusted project's
 * `.goalrun/hooks.json` and `.mcp.json`, and an `--mcp-config` file that lies where the model can write,
 * are read by the workspace reader once per execution, when the workspace context is gathered, and
 * pinned in its row: calls, stop and notify hooks use the pinned content, never the file as it is now.
 * Trust is pinned to content: what the user trusted at the goal's start (or at `resume --trust-project`)
 * is what a later gathering uses; a file changed since is not used, and the notice says how to trust it.
 * What they bring never widens the sandbox: a hook's `network` is dropped, a server that needs a host
 * variable (`${VAR}`) is not started, and an HTTP server (reached from the tool host) only with --network.
 */
import type * as Zod from 'zod';
import type {
  ExtensionSources,
  PinnedWorkspaceFile,
  WorkspaceExtensionKind,
  WorkspaceFilesState,
} from '../../core/extensions/workspace-context';
import type { SandboxSettings } from '../../core/sandbox-settings';
import { plural } from '../../core/text';
import { insideRoots, readWorkspaceFileSync } from '../workspace-files/read-workspace-file';
import {
  describeIssues,
  HOOK_EVENTS,
  type HookEvent,
  type HooksConfig,
  isHttpServer,
  type McpServerConfig,
  mcpConfigFileSchema,
  projectHooksFileSchema,
} from './config-schemas';
import type { ConfiguredHook, ConfiguredServer } from './extension-config';

/** A project's MCP servers, in the workspace (Claude Code's name for it). */
export const PROJECT_MCP_FILE = '.mcp.json';
/** A project's hooks, in the workspace. */
export const PROJECT_HOOKS_FILE = '.goalrun/hooks.json';
/** The flag that trusts a project (its old name stays an alias). */
export const TRUST_FLAG = '--trust-project';

const zod = (): typeof Zod => require('zod') as typeof Zod;

/** What the gathering needs to pin the workspace's files. */
export interface WorkspaceFilesInput {
  sources: ExtensionSources;
  workspace: string;
  sandbox: SandboxSettings;
  /** Whether the project is trusted (the goal's flag, or the tool host's config). */
  trusted: boolean;
  execution: number;
  /** What the previous gathering of this goal pinned (none for a goal's first). */
  previous?: WorkspaceFilesState;
  /** The session id, for the command a notice names. */
  sessionId: string;
}

/** One workspace file to pin: where it is, and how it is validated. */
interface Candidate {
  kind: WorkspaceExtensionKind;
  root: string;
  relative: string;
  /** How notes name it. */
  label: string;
}

/** Where an `--mcp-config` file lies in the workspace or a writable root (the model can write it), or null. */
export function workspaceMcpConfig(
  file: string,
  workspace: string,
  sandbox: Pick<SandboxSettings, 'writableRoots'>,
): { root: string; relative: string } | null {
  return insideRoots(file, [workspace, ...sandbox.writableRoots]);
}

/** Validates a file's JSON as its kind; the content to pin, or the problem. */
function validate(
  kind: WorkspaceExtensionKind,
  label: string,
  text: string,
): { content: unknown } | { problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { problem: `${label} is not valid JSON: ${(err as Error).message}` };
  }
  if (kind === 'project-hooks') {
    const parsed = projectHooksFileSchema(zod()).safeParse(json);
    return parsed.success
      ? { content: { hooks: parsed.data.hooks } }
      : { problem: `${label} is invalid: ${describeIssues(parsed.error)}` };
  }
  const parsed = mcpConfigFileSchema(zod()).safeParse(json);
  return parsed.success
    ? { content: { mcpServers: parsed.data.mcpServers } }
    : { problem: `${label} is invalid: ${describeIssues(parsed.error)}` };
}

/** What a file brings, counted for a notice: `4 hooks`, `1 MCP server`. */
export function countOf(kind: WorkspaceExtensionKind, content: unknown): string {
  if (kind === 'project-hooks') {
    const hooks = (content as { hooks?: HooksConfig } | null)?.hooks ?? {};
    return plural(
      HOOK_EVENTS.reduce((sum, event) => sum + (hooks[event]?.length ?? 0), 0),
      'hook',
    );
  }
  return plural(
    Object.keys((content as { mcpServers?: object } | null)?.mcpServers ?? {}).length,
    'MCP server',
  );
}

/**
 * Reads the workspace's own extension files for one execution and decides what it uses: the pins it
 * keeps (content as trusted), the files it found and ignored, and the notes for the user.
 */
export function gatherWorkspaceFiles(input: WorkspaceFilesInput): {
  state: WorkspaceFilesState;
  notes: string[];
} {
  const notes: string[] = [];
  const pins: PinnedWorkspaceFile[] = [];
  const ignored: string[] = [];
  const candidates: Candidate[] = [];
  const project = (kind: WorkspaceExtensionKind, relative: string) => ({
    kind,
    root: input.workspace,
    relative,
    label: relative,
  });
  if (input.trusted) {
    candidates.push(project('project-hooks', PROJECT_HOOKS_FILE), project('project-mcp', PROJECT_MCP_FILE));
  } else {
    for (const candidate of [
      project('project-hooks', PROJECT_HOOKS_FILE),
      project('project-mcp', PROJECT_MCP_FILE),
    ]) {
      const read = readWorkspaceFileSync(candidate.root, candidate.relative, candidate.kind);
      if (!read.ok && read.missing) continue;
      const checked = read.ok ? validate(candidate.kind, candidate.label, read.text) : null;
      const what = checked && 'content' in checked ? ` (${countOf(candidate.kind, checked.content)})` : '';
      ignored.push(`${candidate.label}${what}`);
      notes.push(
        `found ${candidate.label}${what}: not used, the project is not trusted (${TRUST_FLAG} uses it; see docs/security.md)`,
      );
    }
  }
  const mcpConfig = input.sources.mcpConfigFile
    ? workspaceMcpConfig(input.sources.mcpConfigFile, input.workspace, input.sandbox)
    : null;
  if (mcpConfig) {
    candidates.push({
      kind: 'workspace-mcp-config',
      root: mcpConfig.root,
      relative: mcpConfig.relative,
      label: input.sources.mcpConfigFile as string,
    });
  }
  // A resume --trust-project trusts the files as they are now; otherwise the first pin stands.
  const retrust = input.sources.trustedExecution === input.execution;
  for (const candidate of candidates) {
    const read = readWorkspaceFileSync(candidate.root, candidate.relative, candidate.kind, candidate.label);
    let sha256: string | null = null;
    let content: unknown = null;
    if (read.ok) {
      const checked = validate(candidate.kind, candidate.label, read.text);
      if ('content' in checked) {
        sha256 = read.sha256;
        content = checked.content;
      } else notes.push(checked.problem);
    } else if (!read.missing) notes.push(read.note);
    const earlier = retrust
      ? undefined
      : input.previous?.pins.find((pin) => pin.kind === candidate.kind && pin.file === candidate.label);
    if (earlier && earlier.sha256 !== sha256) {
      pins.push(earlier);
      notes.push(
        `${candidate.label} changed since you trusted the project (execution ${earlier.trustedAt}); not used: this goal keeps ${
          earlier.content
            ? `the ${countOf(candidate.kind, earlier.content)} trusted then`
            : 'to what it had then (nothing)'
        }. Look at it, then trust it as it is now: goalrun resume ${input.sessionId} ${TRUST_FLAG}`,
      );
      continue;
    }
    pins.push(
      earlier ?? { file: candidate.label, kind: candidate.kind, sha256, trustedAt: input.execution, content },
    );
  }
  return { state: { pins, ignored }, notes };
}

/** Whether a server's configuration names a host variable anywhere (`${VAR}`, which a workspace file may not). */
function namesHostVariable(config: McpServerConfig): boolean {
  return JSON.stringify(config).includes('${');
}

/** The hooks and servers this execution's pins bring, with what they may not do taken out (and said). */
export function pinnedExtensions(
  state: WorkspaceFilesState | undefined,
  sandbox: Pick<SandboxSettings, 'network'>,
): { servers: ConfiguredServer[]; hooks: Record<HookEvent, ConfiguredHook[]>; problems: string[] } {
  const hooks: Record<HookEvent, ConfiguredHook[]> = { pre_tool: [], post_tool: [], stop: [], notify: [] };
  const servers: ConfiguredServer[] = [];
  const problems: string[] = [];
  for (const pin of state?.pins ?? []) {
    if (!pin.content) continue;
    if (pin.kind === 'project-hooks') {
      const config = (pin.content as { hooks: HooksConfig }).hooks;
      for (const event of HOOK_EVENTS) {
        for (const hook of config[event] ?? []) {
          if (hook.network) {
            problems.push(
              `${pin.file}: the ${event} hook "${clip(hook.command)}" asks for the network; a workspace file never widens the sandbox, so it runs without (set network in $GOALRUN_HOME/config.json hooks)`,
            );
          }
          const { network: _dropped, ...rest } = hook;
          hooks[event].push({ ...rest, source: 'project' });
        }
      }
      continue;
    }
    const source = pin.kind === 'project-mcp' ? ('project' as const) : ('mcp-config' as const);
    const entries = Object.entries(
      (pin.content as { mcpServers: Record<string, McpServerConfig> }).mcpServers,
    );
    for (const [name, config] of entries) {
      if (namesHostVariable(config)) {
        problems.push(
          `${pin.file}: MCP server "${name}" names a host variable (\${…}); a workspace file never expands the tool host's environment, so it is not started (move it to $GOALRUN_HOME/config.json mcp_servers, or to an --mcp-config file outside the workspace)`,
        );
        continue;
      }
      if (isHttpServer(config) && !sandbox.network) {
        problems.push(
          `${pin.file}: MCP server "${name}" is reached over HTTP from the tool host, which is network this goal's sandbox does not have; not used (--network allows it)`,
        );
        continue;
      }
      servers.push({ name, config, source, fromWorkspace: true });
    }
  }
  return { servers, hooks, problems };
}

function clip(command: string): string {
  const line = command.replace(/\s+/g, ' ').trim();
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
