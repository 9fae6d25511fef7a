/**
 * What the model step makes of a goal's MCP tools: the specs it offers the model (after the built-in
 * tools, in the order the tool host listed them, so every step's tool list is the same) and the
 * routing of a call its server's approval policy holds for a human.
 */
import { mcpCallNeedsApproval, type WorkspaceContextData } from '../../core/extensions/workspace-context';
import type { ToolCallPart } from '../../core/messages';
import { clip } from '../../core/text';
import type { ToolSpec } from '../providers/types';
import type { ToolCallRouting } from '../tools/routing';

/** Longest argument text shown in an approval prompt. */
const APPROVAL_ARGS_MAX_CHARS = 2_000;

/** The MCP tools offered to the model (none for goals without a workspace context). */
export function mcpToolSpecs(context: WorkspaceContextData | null): ToolSpec[] {
  return (context?.mcp.tools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.description || `${tool.tool} (MCP server ${tool.server})`,
    inputSchema: tool.inputSchema,
  }));
}

/** The routing of an MCP call that waits for `goalrun approve`, or undefined. */
export function mcpRouting(
  call: ToolCallPart,
  context: WorkspaceContextData | null,
): ToolCallRouting | undefined {
  const tool = context?.mcp.tools.find((entry) => entry.name === call.toolName);
  if (!tool) return undefined;
  const server = context?.mcp.servers.find((entry) => entry.name === tool.server);
  if (!server || !mcpCallNeedsApproval(server.approval, tool.readOnly)) return undefined;
  const args = JSON.stringify(call.input ?? {});
  const shown = clip(args, APPROVAL_ARGS_MAX_CHARS);
  return {
    escalation: {
      command: `${tool.server}: ${tool.tool} ${shown}`,
      justification: `MCP server "${tool.server}" has approval "${server.approval}" (mcp_servers.${tool.server}.approval)`,
      mcpServer: tool.server,
    },
  };
}
