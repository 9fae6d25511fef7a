/**
 * Where a goal's MCP servers and hooks come from, read on the tool host when it needs them: the
 * tool host's own config (`$GOALRUN_HOME/config.json`: `mcp_servers`, `hooks`), the goal's
 * `--mcp-config FILE`, and, only when the goal trusts its project (`--trust-project-mcp` or config
 * `trust_project_mcp`), the workspace's `.mcp.json` and `.goalrun/hooks.json`: a repository must not
 * start processes on a worker just by being cloned. Nothing read here enters a payload or the store.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type * as Zod from 'zod';
import { ConfigError } from '../../core/errors';
import { DEFAULT_INSTRUCTIONS_MAX_BYTES } from '../../core/extensions/project-instructions';
import type { ExtensionSources, McpServerEntry } from '../../core/extensions/workspace-context';
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
  projectHooksFileSchema,
} from './config-schemas';

/** A project's MCP servers, in the workspace (Claude Code's name for it). */
export const PROJECT_MCP_FILE = '.mcp.json';
/** A project's hooks, in the workspace. */
export const PROJECT_HOOKS_FILE = path.join('.goalrun', 'hooks.json');

/** A server and where it was configured. */
export interface ConfiguredServer {
  name: string;
  config: McpServerConfig;
  source: McpServerEntry['source'];
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

const zod = (): typeof Zod => require('zod') as typeof Zod;

function readJson(
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
  const json = readJson(file);
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
  if (typeof raw.trust_project_mcp === 'boolean') part.trust_project_mcp = raw.trust_project_mcp;
  if (typeof raw.instructions_max_kib === 'number') part.instructions_max_kib = raw.instructions_max_kib;
  return part;
}

/** The MCP servers and hooks of a goal, as its tool host sees them now. */
export function loadGoalExtensions(
  sources: ExtensionSources,
  workspace: string,
  home: string,
): GoalExtensions {
  const problems: string[] = [];
  const host = readHostConfig(home, problems);
  const servers = new Map<string, ConfiguredServer>();
  const hooks: Record<HookEvent, ConfiguredHook[]> = { pre_tool: [], post_tool: [], stop: [], notify: [] };
  const addHooks = (config: HooksConfig | undefined, source: ConfiguredHook['source']) => {
    for (const event of HOOK_EVENTS)
      for (const hook of config?.[event] ?? []) hooks[event].push({ ...hook, source });
  };
  for (const [name, config] of Object.entries(host.mcp_servers ?? {}))
    servers.set(name, { name, config, source: 'config' });
  addHooks(host.hooks, 'config');
  if (sources.trustProject || host.trust_project_mcp) {
    const projectServers = path.join(workspace, PROJECT_MCP_FILE);
    const json = readJson(projectServers);
    if (json.ok) {
      const parsed = mcpConfigFileSchema(zod()).safeParse(json.value);
      if (parsed.success) {
        for (const [name, config] of Object.entries(parsed.data.mcpServers))
          servers.set(name, { name, config: config as McpServerConfig, source: 'project' });
      } else problems.push(`${projectServers} is invalid: ${describeIssues(parsed.error)}`);
    } else if (!json.missing) problems.push(json.error);
    const projectHooks = path.join(workspace, PROJECT_HOOKS_FILE);
    const hooksJson = readJson(projectHooks);
    if (hooksJson.ok) {
      const parsed = projectHooksFileSchema(zod()).safeParse(hooksJson.value);
      if (parsed.success) addHooks(parsed.data.hooks, 'project');
      else problems.push(`${projectHooks} is invalid: ${describeIssues(parsed.error)}`);
    } else if (!hooksJson.missing) problems.push(hooksJson.error);
  }
  if (sources.mcpConfigFile) {
    try {
      for (const [name, config] of Object.entries(readMcpConfigFile(sources.mcpConfigFile)))
        servers.set(name, { name, config, source: 'mcp-config' });
    } catch (err) {
      problems.push((err as Error).message);
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
