/**
 * How MCP tools are named to the model: `mcp__<server>__<tool>`, the convention Claude Code and
 * others use, so a model that knows MCP recognises them. Providers accept tool names of
 * `[A-Za-z0-9_-]{1,64}`; a server's own tool name is mapped onto that, and the original kept.
 */

/** Prefix of every MCP tool name. */
export const MCP_TOOL_PREFIX = 'mcp__';
/** Between the server's name and the tool's. */
const SEPARATOR = '__';
/** Longest tool name providers accept. */
export const MAX_TOOL_NAME_CHARS = 64;
/** A server name as configured: letters, digits, `-` and single `_` (a `__` would make names ambiguous). */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;

/** Whether a tool name is an MCP tool's. */
export function isMcpToolName(name: string): boolean {
  return name.startsWith(MCP_TOOL_PREFIX);
}

/** A tool's name as the model sees it, or null when it would be longer than providers accept. */
export function mcpToolName(server: string, tool: string): string | null {
  const safeTool = tool.replace(/[^A-Za-z0-9_-]/g, '_');
  const name = `${MCP_TOOL_PREFIX}${server}${SEPARATOR}${safeTool}`;
  return name.length <= MAX_TOOL_NAME_CHARS ? name : null;
}

/** The server part of an MCP tool name (the tool part may have been mapped; look it up instead). */
export function mcpServerOf(name: string): string | null {
  if (!isMcpToolName(name)) return null;
  const rest = name.slice(MCP_TOOL_PREFIX.length);
  const at = rest.indexOf(SEPARATOR);
  return at > 0 ? rest.slice(0, at) : null;
}

/** One line for the Web UI and the log: `mcp everything: echo`. */
export function mcpCallSummary(name: string, originalTool?: string): string {
  const server = mcpServerOf(name);
  if (!server) return name;
  const tool = originalTool ?? name.slice(MCP_TOOL_PREFIX.length + server.length + SEPARATOR.length);
  return `mcp ${server}: ${tool}`;
}
