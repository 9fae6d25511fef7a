/**
 * Listing one MCP server's tools for the workspace context: each tool under its goalrun name, with
 * the tools a provider could not take (a name too long or clashing, a schema it refuses) left out
 * and named. A server that cannot be reached is an entry with its problem, never a failure.
 */
import { mcpToolName } from '../../core/extensions/mcp-names';
import { checkToolSchema, clipDescription } from '../../core/extensions/mcp-schema-check';
import type { McpServerEntry, McpToolEntry } from '../../core/extensions/workspace-context';
import { isHttpServer } from './config-schemas';
import type { GoalExtensions } from './extension-config';
import type { McpRunContext } from './mcp-connection';
import type { McpHub } from './mcp-hub';

/** One server's tools and its entry in the context, with the secrets its connection used (to redact). */
export async function listMcpServer(
  hub: McpHub,
  server: GoalExtensions['servers'][number],
  run: McpRunContext,
): Promise<{ entry: McpServerEntry; tools: McpToolEntry[]; secrets: readonly string[] }> {
  const base = {
    name: server.name,
    transport: isHttpServer(server.config) ? ('http' as const) : ('stdio' as const),
    approval: server.config.approval ?? 'never',
    source: server.source,
  };
  try {
    const { connection } = await hub.connect(server, run);
    const listed = await connection.listTools();
    const tools: McpToolEntry[] = [];
    const left: string[] = [];
    const seen = new Set<string>();
    for (const tool of listed) {
      const name = mcpToolName(server.name, tool.name);
      if (!name) {
        left.push(`${tool.name} (its name is too long for providers)`);
        continue;
      }
      if (seen.has(name)) {
        left.push(`${tool.name} (its name clashes with another tool's)`);
        continue;
      }
      const verdict = checkToolSchema(tool.inputSchema);
      if (!verdict.ok) {
        left.push(`${tool.name} (${verdict.problem})`);
        continue;
      }
      seen.add(name);
      tools.push({
        name,
        server: server.name,
        tool: tool.name,
        description: clipDescription(tool.description ?? tool.title),
        inputSchema: verdict.schema,
        readOnly: tool.annotations?.readOnlyHint === true,
      });
    }
    return {
      entry: {
        ...base,
        ok: true,
        tools: tools.length,
        ...(left.length > 0 ? { problem: `left out ${left.join('; ')}` } : {}),
      },
      tools,
      secrets: connection.secrets,
    };
  } catch (err) {
    await hub.drop(run.sessionId, server.name).catch(() => undefined);
    return {
      entry: { ...base, ok: false, tools: 0, problem: (err as Error).message },
      tools: [],
      secrets: [],
    };
  }
}
