/**
 * Where a goal's MCP servers and hooks come from: the tool host's own config (`$GOALRUN_HOME/
 * config.json`: `mcp_servers`, `hooks`) and the goal's `--mcp-config FILE`, both the user's and read
 * when needed; and the workspace's own files (a trusted project's `.mcp.json` and `.goalrun/hooks.json`,
 * an `--mcp-config` the model could write), which only the gathering reads, once per execution, and
 * pins in the workspace context row (workspace-extensions.ts). Nothing of the user's files enters a
 * payload or the store.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type * as Zod from 'zod';
import { ConfigError } from '../../core/errors';
import { DEFAULT_INSTRUCTIONS_MAX_BYTES } from '../../core/extensions/project-instructions';
import type {
  ExtensionSources,
  McpServerEntry,
  WorkspaceFilesState,
} from '../../core/extensions/workspace-context';
import type { SandboxSettings } from '../../core/sandbox-settings';
import { readWorkspaceFileSync } from '../workspace-files/read-workspace-file';
import {
  describeIssues,
  HOOK_EVENTS,
  type HookConfig,
  type HookEvent,
  type HooksConfig,
  hooksSchema,
  type McpServerConfig,
  mcpConfigFileSchema,
  mcpServersSchema,
} from './config-schemas';
import { pinnedExtensions, workspaceMcpConfig } from './workspace-extensions';

/** A server and where it was configured. */
export interface ConfiguredServer {
  name: string;
  config: McpServerConfig;
  source: McpServerEntry['source'];
  /** It came from a workspace file: `${VAR}` is never expanded from the tool host's environment. */
  fromWorkspace?: boolean;
}

/** A hook and where it was configured. */
export interface ConfiguredHook extends HookConfig {
  source: 'config' | 'project';
}

/** Everything a tool host runs for a goal besides its own tools. */
export interface GoalExtensions {
  servers: ConfiguredServer[];
  hooks: Record<HookEvent, ConfiguredHook[]>;
  instructionsMaxBytes: number;
  /** Files that could not be used, one line each (the goal goes on without them). */
  problems: string[];
}

/** What decides a goal's extensions on the tool host. */
export interface GoalExtensionInputs {
  sources: ExtensionSources;
  workspace: string;
  /** The tool host's GOALRUN_HOME. */
  home: string;
  sandbox: SandboxSettings;
  /** The workspace files this execution pinned (its row); absent: no workspace file counts. */
  workspaceFiles?: WorkspaceFilesState;
}

const zod = (): typeof Zod => require('zod') as typeof Zod;

/** Reads a JSON file of the user's (never a workspace file: those go through the workspace reader). */
export function readJson(
  file: string,
): { ok: true; value: unknown } | { ok: false; missing: boolean; error: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    return { ok: false, missing, error: `cannot read ${file}: ${(err as Error).message}` };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, missing: false, error: `${file} is not valid JSON: ${(err as Error).message}` };
  }
}

/**
 * Reads and validates an MCP config file (`{"mcpServers": {...}}`); a ConfigError names the file
 * and the bad key. The CLI calls it for `--mcp-config`, so a broken file stops `run` at once.
 */
export function readMcpConfigFile(file: string): Record<string, McpServerConfig> {
  return parseMcpConfig(file, readJson(file));
}

/**
 * `readMcpConfigFile` for the CLI's check at start: a file in the workspace or a writable root is
 * read by the workspace reader (no link followed), as the tool host will read it.
 */
export function checkMcpConfigFile(
  file: string,
  workspace: string,
  sandbox: Pick<SandboxSettings, 'writableRoots'>,
): Record<string, McpServerConfig> {
  const inside = workspaceMcpConfig(file, workspace, sandbox);
  if (!inside) return readMcpConfigFile(file);
  const read = readWorkspaceFileSync(inside.root, inside.relative, 'workspace-mcp-config', file);
  if (!read.ok) {
    throw new ConfigError(
      read.missing ? `--mcp-config: ${file} does not exist` : `--mcp-config: ${read.note}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(read.text);
  } catch (err) {
    throw new ConfigError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
  return parseMcpConfig(file, { ok: true, value });
}

/** Validates an MCP config file's JSON (read by readJson or by the workspace reader). */
export function parseMcpConfig(
  file: string,
  json: ReturnType<typeof readJson>,
): Record<string, McpServerConfig> {
  if (!json.ok) throw new ConfigError(json.missing ? `--mcp-config: ${file} does not exist` : json.error);
  const parsed = mcpConfigFileSchema(zod()).safeParse(json.value);
  if (!parsed.success)
    throw new ConfigError(`MCP config ${file} is invalid: ${describeIssues(parsed.error)}`);
  return parsed.data.mcpServers as Record<string, McpServerConfig>;
}

/** The extension keys of the tool host's config.json (the worker validated the whole file when it started). */
interface HostConfigPart {
  mcp_servers?: Record<string, McpServerConfig>;
  hooks?: HooksConfig;
  trust_project?: boolean;
  trust_project_mcp?: boolean;
  instructions_max_kib?: number;
}

function readHostConfig(home: string, problems: string[]): HostConfigPart {
  const file = path.join(home, 'config.json');
  const json = readJson(file);
  if (!json.ok) {
    if (!json.missing) problems.push(json.error);
    return {};
  }
  const raw = (json.value ?? {}) as Record<string, unknown>;
  const z = zod();
  const part: HostConfigPart = {};
  if (raw.mcp_servers !== undefined) {
    const parsed = mcpServersSchema(z, true).safeParse(raw.mcp_servers);
    if (parsed.success) part.mcp_servers = parsed.data as Record<string, McpServerConfig>;
    else problems.push(`${file}: ${describeIssues(parsed.error, 'mcp_servers')}`);
  }
  if (raw.hooks !== undefined) {
    const parsed = hooksSchema(z).safeParse(raw.hooks);
    if (parsed.success) part.hooks = parsed.data;
    else problems.push(`${file}: ${describeIssues(parsed.error, 'hooks')}`);
  }
  if (typeof raw.trust_project === 'boolean') part.trust_project = raw.trust_project;
  if (typeof raw.trust_project_mcp === 'boolean') part.trust_project_mcp = raw.trust_project_mcp;
  if (typeof raw.instructions_max_kib === 'number') part.instructions_max_kib = raw.instructions_max_kib;
  return part;
}

/** Whether the tool host's own config trusts every project (`trust_project`, or its old name). */
export function hostTrustsProjects(home: string): boolean {
  const host = readHostConfig(home, []);
  return host.trust_project === true || host.trust_project_mcp === true;
}

/** An empty set of hooks. */
export function noHooks(): Record<HookEvent, ConfiguredHook[]> {
  return { pre_tool: [], post_tool: [], stop: [], notify: [] };
}

/** Adds a hooks section to `hooks`, marked with where it came from. */
export function addHooks(
  hooks: Record<HookEvent, ConfiguredHook[]>,
  config: HooksConfig | undefined,
  source: ConfiguredHook['source'],
): void {
  for (const event of HOOK_EVENTS)
    for (const hook of config?.[event] ?? []) hooks[event].push({ ...hook, source });
}

/**
 * The MCP servers and hooks of a goal on its tool host: the host's config and the user's
 * `--mcp-config` as they are now, and the workspace's own files only as this execution pinned them.
 */
export function goalExtensions(inputs: GoalExtensionInputs): GoalExtensions {
  const problems: string[] = [];
  const host = readHostConfig(inputs.home, problems);
  const servers = new Map<string, ConfiguredServer>();
  const hooks = noHooks();
  for (const [name, config] of Object.entries(host.mcp_servers ?? {}))
    servers.set(name, { name, config, source: 'config' });
  addHooks(hooks, host.hooks, 'config');
  const pinned = pinnedExtensions(inputs.workspaceFiles, inputs.sandbox);
  problems.push(...pinned.problems);
  for (const server of pinned.servers.filter((server) => server.source === 'project'))
    servers.set(server.name, server);
  for (const event of HOOK_EVENTS) hooks[event].push(...pinned.hooks[event]);
  const file = inputs.sources.mcpConfigFile;
  if (file) {
    if (workspaceMcpConfig(file, inputs.workspace, inputs.sandbox)) {
      // The model can write it: as pinned, never as it is now.
      for (const server of pinned.servers.filter((server) => server.source === 'mcp-config'))
        servers.set(server.name, server);
    } else {
      try {
        for (const [name, config] of Object.entries(readMcpConfigFile(file)))
          servers.set(name, { name, config, source: 'mcp-config' });
      } catch (err) {
        problems.push((err as Error).message);
      }
    }
  }
  return {
    servers: [...servers.values()],
    hooks,
    instructionsMaxBytes: host.instructions_max_kib
      ? host.instructions_max_kib * 1024
      : DEFAULT_INSTRUCTIONS_MAX_BYTES,
    problems,
  };
}
