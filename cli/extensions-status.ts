/**
 * What `status` says about the goal's workspace context: the project instruction files in effect,
 * its MCP servers with their tool counts, and its hooks, read from the store row the tool host
 * wrote for the goal's newest execution. Goals started before it have none and show nothing.
 */
import type { WorkspaceContextData } from '../core/extensions/workspace-context';
import type { SessionStore } from '../store/types';

/** The part of `status --json` about the workspace context. */
export interface ExtensionsView {
  execution: number;
  instructions: Array<{ file: string; bytes: number; shownBytes: number }>;
  mcpServers: Array<{
    name: string;
    transport: string;
    ok: boolean;
    tools: number;
    approval: string;
    problem?: string;
  }>;
  hooks: WorkspaceContextData['hooks'];
  /** The project's hook and MCP files found and not used (the project is not trusted). */
  ignored: string[];
}

/** The view of a session's newest workspace context, or null. */
export async function extensionsView(store: SessionStore, sessionId: string): Promise<ExtensionsView | null> {
  const row = await store.latestWorkspaceContext(sessionId);
  if (!row) return null;
  const data = row.data as WorkspaceContextData;
  return {
    execution: row.execution,
    instructions: data.instructions.files.map((file) => ({
      file: file.label,
      bytes: file.bytes,
      shownBytes: file.shownBytes,
    })),
    mcpServers: data.mcp.servers.map((server) => ({
      name: server.name,
      transport: server.transport,
      ok: server.ok,
      tools: server.tools,
      approval: server.approval,
      ...(server.problem ? { problem: server.problem } : {}),
    })),
    hooks: data.hooks,
    ignored: data.workspaceFiles?.ignored ?? [],
  };
}

/** The lines `status` prints for it (aligned with formatSnapshot's labels). */
export function extensionsLines(view: ExtensionsView): string[] {
  const files =
    view.instructions.length === 0
      ? 'none'
      : view.instructions
          .map((file) =>
            file.shownBytes === file.bytes
              ? file.file
              : file.shownBytes === 0
                ? `${file.file} (left out: over the cap)`
                : `${file.file} (cut to ${file.shownBytes} of ${file.bytes} bytes)`,
          )
          .join(', ');
  const lines = [`${'rules'.padEnd(10)} ${files}`];
  if (view.mcpServers.length > 0) {
    const servers = view.mcpServers
      .map((server) =>
        server.ok
          ? `${server.name} (${server.transport}, ${server.tools} tool${server.tools === 1 ? '' : 's'}${server.approval !== 'never' ? `, approval ${server.approval}` : ''})`
          : `${server.name} (${server.transport}, failed: ${server.problem ?? 'unknown'})`,
      )
      .join(', ');
    lines.push(`${'mcp'.padEnd(10)} ${servers}`);
  }
  const hooks = Object.entries(view.hooks)
    .filter(([, count]) => count > 0)
    .map(([event, count]) => `${event} ${count}`);
  if (hooks.length > 0) lines.push(`${'hooks'.padEnd(10)} ${hooks.join(', ')}`);
  for (const file of view.ignored) {
    lines.push(
      `${'project'.padEnd(10)} found ${file}: not used, the project is not trusted (--trust-project)`,
    );
  }
  return lines;
}
